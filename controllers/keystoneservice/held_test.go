package keystoneservice

import (
	"context"
	"strings"
	"testing"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/controllers/registration"
	"github.com/keystone-stepwise/keystone-operator/internal/finalizers"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// heldClient is a fake cache of KeystoneServices in namespaces "a" and "b", held by
// KeystoneEndpoints of several names, with FinalizerIndex as SetupWithManager
// registers it.
func heldClient(g Gomega, long string) client.Client {
	scheme := runtime.NewScheme()
	g.Expect(keystonev1.AddToScheme(scheme)).To(Succeed())
	held := func(ns, name string, by ...string) *keystonev1.KeystoneService {
		return &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			UID: types.UID(ns + "/" + name), Finalizers: append([]string{Finalizer}, by...)}}
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithIndex(&keystonev1.KeystoneService{}, FinalizerIndex, finalizersOf).WithObjects(
		held("a", "ours", finalizers.For("keystoneendpoint", "glance")),
		held("a", "upstreams", finalizers.Upstream("keystoneendpoint", "glance")),
		held("a", "both", finalizers.For("keystoneendpoint", "glance"), finalizers.Upstream("keystoneendpoint", "glance")),
		held("a", "other-endpoint", finalizers.For("keystoneendpoint", "glance-internal"), finalizers.Upstream("keystoneendpoint", "nova")),
		held("a", "other-kind", finalizers.For("keystoneapplicationcredential", "glance")),
		held("a", "long", finalizers.For("keystoneendpoint", long)),
		held("a", "unheld"),
		held("b", "other-namespace", finalizers.For("keystoneendpoint", "glance")),
	).Build()
}

// TestHeldBy: the KeystoneServices a KeystoneEndpoint holds are those of its namespace
// with its finalizer, this suite's or keystone-operator's, a long name's digest
// included, each once; not one held by another KeystoneEndpoint or another kind, nor
// one of another namespace held under the same name.
func TestHeldBy(t *testing.T) {
	g := NewWithT(t)
	long := "placement-" + strings.Repeat("x", 70)
	c := heldClient(g, long)
	names := func(ns, endpoint string) []string {
		held, err := HeldBy(context.Background(), c, ns, endpoint)
		g.Expect(err).NotTo(HaveOccurred())
		out := []string{}
		for _, svc := range held {
			out = append(out, svc.Namespace+"/"+svc.Name)
		}
		return out
	}
	g.Expect(names("a", "glance")).To(ConsistOf("a/ours", "a/upstreams", "a/both"))
	g.Expect(names("a", long)).To(ConsistOf("a/long"))
	g.Expect(names("a", "cinder")).To(BeEmpty())
	g.Expect(names("b", "glance")).To(ConsistOf("b/other-namespace"))
}

// TestWakeHeld: a KeystoneEndpoint's deletion wakes the KeystoneServices it held
// (HeldBy), each once, and no other.
func TestWakeHeld(t *testing.T) {
	g := NewWithT(t)
	long := "placement-" + strings.Repeat("x", 70)
	h := (&Reconciler{Base: registration.Base{Client: heldClient(g, long)}}).wakeHeld()
	woken := func(ns, name string) []string {
		q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
		defer q.ShutDown()
		h.Delete(context.Background(), event.TypedDeleteEvent[client.Object]{
			Object: &keystonev1.KeystoneEndpoint{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}}, q)
		return drained(q)
	}
	g.Expect(woken("a", "glance")).To(Equal([]string{"a/both", "a/ours", "a/upstreams"}))
	g.Expect(woken("a", long)).To(Equal([]string{"a/long"}))
	g.Expect(woken("a", "cinder")).To(BeEmpty())
}
