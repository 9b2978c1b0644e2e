package keystoneservice

import (
	"context"
	"testing"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/controllers/registration"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// TestSecretReaders: a Secret's change wakes the KeystoneServices of its namespace naming
// it in spec.secret, and every KeystoneService of the namespace when it is the admin
// Secret of the KeystoneAPI there (each round opens its session with it; the KeystoneAPI's
// Ready does not always change meanwhile), none of another namespace.
func TestSecretReaders(t *testing.T) {
	g := NewWithT(t)
	scheme := runtime.NewScheme()
	g.Expect(keystonev1.AddToScheme(scheme)).To(Succeed())
	svc := func(ns, name, secret string) *keystonev1.KeystoneService {
		return &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: keystonev1.KeystoneServiceSpec{Secret: secret}}
	}
	api := &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "keystone"},
		Spec: keystonev1.KeystoneAPISpec{Secret: "admin-secret"}}
	c := fake.NewClientBuilder().WithScheme(scheme).
		WithIndex(&keystonev1.KeystoneService{}, secretIndex, func(o client.Object) []string {
			return []string{o.(*keystonev1.KeystoneService).Spec.Secret}
		}).
		WithObjects(api, svc("a", "glance", "glance-secret"), svc("a", "nova", "nova-secret"),
			svc("b", "glance", "glance-secret"), svc("b", "placement", "admin-secret")).Build()
	h := (&Reconciler{Base: registration.Base{Client: c}}).secretReaders()
	woken := func(ns, name string) []string {
		q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
		defer q.ShutDown()
		h.Create(context.Background(), event.CreateEvent{Object: &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}}, q)
		return drained(q)
	}
	g.Expect(woken("a", "admin-secret")).To(Equal([]string{"a/glance", "a/nova"}), "the KeystoneAPI's admin Secret")
	g.Expect(woken("a", "glance-secret")).To(Equal([]string{"a/glance"}), "a Secret one names")
	g.Expect(woken("a", "other")).To(BeEmpty(), "a Secret none reads")
	g.Expect(woken("b", "admin-secret")).To(Equal([]string{"b/placement"}),
		"the same name where no KeystoneAPI reads it: those naming it")
}
