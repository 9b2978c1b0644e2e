package keystoneapi

import (
	"context"
	"fmt"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// reconcileServiceAccount marks ServiceAccountReady: the ServiceAccount every pod of
// the KeystoneAPI runs as, its Role (use of the SecurityContextConstraints nonroot-v2, so
// OpenShift admits the image's fixed UID) and the RoleBinding between them exist as
// keystone-operator names them. While an earlier step is not True they are observed,
// not changed.
func (r *Reconciler) reconcileServiceAccount(ctx context.Context, s *scope) (ctrl.Result, error) {
	api := s.api
	step := keystonev1.KeystoneAPIServiceAccountReady
	sa, role, binding := deploy.ServiceAccount(api), deploy.Role(api), deploy.RoleBinding(api)
	if !s.acting(step) {
		if ok, err := r.written(ctx, s, &corev1.ServiceAccount{ObjectMeta: sa.ObjectMeta}, &rbacv1.Role{ObjectMeta: role.ObjectMeta},
			&rbacv1.RoleBinding{ObjectMeta: binding.ObjectMeta}); err != nil || !ok {
			return ctrl.Result{}, err
		}
		s.round.Apply(step, serviceAccountVerdict(sa.Name, s.afterwards(step)))
		return ctrl.Result{}, nil
	}
	ensure := func(obj client.Object, apply func()) error {
		desiredLabels := obj.GetLabels()
		if _, err := controllerutil.CreateOrPatch(ctx, r.Client, obj, func() error {
			apply()
			obj.SetLabels(deploy.MergeLabels(obj.GetLabels(), desiredLabels))
			return controllerutil.SetControllerReference(api, obj, r.Scheme())
		}); err != nil {
			return fmt.Errorf("ensuring %T %s: %w", obj, obj.GetName(), err)
		}
		return nil
	}
	if err := ensure(sa, func() {}); err != nil {
		return ctrl.Result{}, err
	}
	rules := role.Rules
	if err := ensure(role, func() { role.Rules = rules }); err != nil {
		return ctrl.Result{}, err
	}
	// A RoleBinding's roleRef cannot change: only the subjects are brought in step.
	subjects := binding.Subjects
	roleRef := binding.RoleRef
	if err := ensure(binding, func() {
		if binding.CreationTimestamp.IsZero() {
			binding.RoleRef = roleRef
		}
		binding.Subjects = subjects
	}); err != nil {
		return ctrl.Result{}, err
	}
	if binding.RoleRef != roleRef {
		return ctrl.Result{}, fmt.Errorf("RoleBinding %s refers to %s %s, not Role %s: delete it and it is made anew",
			binding.Name, binding.RoleRef.Kind, binding.RoleRef.Name, role.Name)
	}
	s.round.Apply(step, serviceAccountVerdict(sa.Name, ""))
	return ctrl.Result{}, nil
}

// serviceAccountVerdict is ServiceAccountReady once the ServiceAccount sa, its Role and
// RoleBinding exist (while an earlier step is not True, waiting says when they are
// updated again); what keeps them from existing is an error, retried.
func serviceAccountVerdict(sa, waiting string) condition.Verdict {
	msg := fmt.Sprintf("pods run as ServiceAccount %s, which may use SecurityContextConstraints %s", sa, deploy.PodSCC)
	if waiting != "" {
		msg += " " + waiting
	}
	return condition.TrueVerdict("%s", msg)
}
