package keystoneapi

import (
	"context"
	"testing"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// TestServiceAccountFallsBackToAnyUID: where the operator's rules are not known and the
// API server refuses a Role granting nonroot-v2 (the operator may use anyuid only, as
// under openstack-operator's role), the Role grants anyuid, the step says so, and the
// pods are built for it (no seccomp profile).
func TestServiceAccountFallsBackToAnyUID(t *testing.T) {
	g := NewWithT(t)
	refuses := func(obj client.Object) error {
		if role, ok := obj.(*rbacv1.Role); ok && len(role.Rules) > 0 && role.Rules[0].ResourceNames[0] == deploy.NonRootSCC {
			return apierrors.NewForbidden(schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "roles"}, role.Name,
				nil)
		}
		return nil
	}
	scheme := runtime.NewScheme()
	g.Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	g.Expect(keystonev1.AddToScheme(scheme)).To(Succeed())
	c := fake.NewClientBuilder().WithScheme(scheme).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if err := refuses(obj); err != nil {
				return err
			}
			return c.Create(ctx, obj, opts...)
		},
	}).Build()
	api := &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Namespace: "openstack", UID: "u"}}
	round := appliedSteps(api).Begin(lc.Conditions{}, time.Now())
	round.Apply(keystonev1.KeystoneAPIInputReady, condition.TrueVerdict("inputs"))
	s := &scope{api: api, round: round, in: deploy.Gathered{API: api}}
	r := &Reconciler{Client: c}
	_, err := r.reconcileServiceAccount(context.Background(), s)
	g.Expect(err).NotTo(HaveOccurred())
	role := &rbacv1.Role{}
	g.Expect(c.Get(context.Background(), client.ObjectKey{Namespace: "openstack", Name: "keystone-keystone-role"}, role)).To(Succeed())
	g.Expect(role.Rules[0].ResourceNames).To(Equal([]string{"anyuid"}))
	g.Expect(s.in.SCC).To(Equal(deploy.AnyUIDSCC))
	dep, err := s.in.Deployment()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(dep.Spec.Template.Spec.SecurityContext.SeccompProfile).To(BeNil())
	g.Expect(dep.Spec.Template.Spec.Containers[0].SecurityContext.SeccompProfile).To(BeNil())
}
