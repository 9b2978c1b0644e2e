package keystoneservice

import (
	"context"
	"errors"
	"testing"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/controllers/registration"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/internal/reconciler"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// TestReleaseIsRetried deletes a KeystoneService whose KeystoneAPI is being deleted
// while the API server refuses the first patch of the KeystoneAPI's finalizers: the
// reconcile fails, the KeystoneService keeps its own finalizer, and the next reconcile
// releases both. A release is never dropped.
func TestReleaseIsRetried(t *testing.T) {
	g := NewWithT(t)
	scheme := runtime.NewScheme()
	g.Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	g.Expect(keystonev1.AddToScheme(scheme)).To(Succeed())
	now := metav1.Now()
	api := &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "keystone", DeletionTimestamp: &now,
		Finalizers: []string{"keystone.openstack.org/keystoneapi", "keystone.openstack.org/keystoneservice-glance"}}}
	svc := &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "glance", DeletionTimestamp: &now,
		Finalizers: []string{Finalizer}}}
	refusals := 1
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(api, svc).WithStatusSubresource(svc).
		WithInterceptorFuncs(interceptor.Funcs{
			Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
				// The release is a patch of the metadata (finalizers.Remove): the kind tells the KeystoneAPI's.
				if gvk, _ := c.GroupVersionKindFor(obj); gvk.Kind == "KeystoneAPI" && refusals > 0 {
					refusals--
					return errors.New("the API server is unavailable")
				}
				return c.Patch(ctx, obj, patch, opts...)
			},
		}).Build()
	r := &Reconciler{Base: registration.Base{Client: c, Keystone: &identity.Clients{}}}
	reporter := reconciler.Reporter{Client: c, Recorder: record.NewFakeRecorder(100),
		Metrics: reconciler.NewMetrics(prometheus.NewRegistry(), time.Now), Versions: reconciler.NewVersions()}
	reconciler := reconciler.NewReconciler(c, reporter, clocktesting.NewFakePassiveClock(now.Time), r.kind())
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(svc)}

	_, err := reconciler.Reconcile(context.Background(), req)
	g.Expect(err).To(MatchError(ContainSubstring("the API server is unavailable")))
	g.Expect(c.Get(context.Background(), req.NamespacedName, svc)).To(Succeed())
	g.Expect(svc.Finalizers).To(ConsistOf(Finalizer), "it stays until its release on the KeystoneAPI succeeds")

	_, err = reconciler.Reconcile(context.Background(), req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(api), api)).To(Succeed())
	g.Expect(api.Finalizers).To(ConsistOf("keystone.openstack.org/keystoneapi"))
	err = c.Get(context.Background(), req.NamespacedName, svc)
	g.Expect(client.IgnoreNotFound(err)).To(Succeed())
	if err == nil {
		g.Expect(svc.Finalizers).To(BeEmpty())
	}
}
