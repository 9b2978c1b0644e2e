package keystoneapi

import (
	"context"
	"fmt"
	"slices"
	"strings"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/internal/permissions"
	"github.com/keystone-stepwise/keystone-operator/internal/reconciler"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// reconcileServiceAccount marks ServiceAccountReady: the ServiceAccount every pod of
// the KeystoneAPI runs as, its Role (use of the SecurityContextConstraints nonroot-v2,
// or anyuid where the operator may grant only that: deploy.PodSCC, so OpenShift admits
// the image's fixed UID) and the RoleBinding between them exist as keystone-operator
// names them. While an earlier step is not True they are observed, not changed.
func (r *Reconciler) reconcileServiceAccount(ctx context.Context, s *scope) (ctrl.Result, error) {
	api := s.api
	step := keystonev1.KeystoneAPIServiceAccountReady
	scc := deploy.PodSCC(func(name string) bool {
		return permissions.Allows(r.Client, "use", "security.openshift.io", "securitycontextconstraints", name)
	})
	// The pods are built for the SCC the Role grants (no seccomp profile under anyuid).
	s.in.SCC = scc
	sa, role, binding := deploy.ServiceAccount(api), deploy.Role(api, scc), deploy.RoleBinding(api)
	if !s.acting(step) {
		existing := &rbacv1.Role{ObjectMeta: role.ObjectMeta}
		if ok, err := r.written(ctx, s, &corev1.ServiceAccount{ObjectMeta: sa.ObjectMeta}, existing,
			&rbacv1.RoleBinding{ObjectMeta: binding.ObjectMeta}); err != nil || !ok {
			return ctrl.Result{}, err
		}
		s.round.Apply(step, serviceAccountVerdict(sa.Name, grantedSCC(existing), s.afterwards(step)))
		return ctrl.Result{}, nil
	}
	ensure := func(obj client.Object, apply func()) error {
		desiredLabels := obj.GetLabels()
		if _, err := reconciler.CreateOrPatch(ctx, r.Client, obj, func() error {
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
	writeRole := func() error {
		role = deploy.Role(api, scc)
		rules := role.Rules
		return ensure(role, func() { role.Rules = rules })
	}
	err := writeRole()
	if apierrors.IsForbidden(err) && scc == deploy.NonRootSCC {
		// The rules were not known (no complete review at start) and the API server says
		// the operator may not grant nonroot-v2: anyuid, as where it is known.
		scc = deploy.AnyUIDSCC
		s.in.SCC = scc
		err = writeRole()
	}
	if err != nil {
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
	s.round.Apply(step, serviceAccountVerdict(sa.Name, scc, ""))
	return ctrl.Result{}, nil
}

// grantedSCC is the SecurityContextConstraints a Role lets use, as the Role says.
func grantedSCC(role *rbacv1.Role) string {
	for _, rule := range role.Rules {
		if slices.Contains(rule.Resources, "securitycontextconstraints") && len(rule.ResourceNames) > 0 {
			return strings.Join(rule.ResourceNames, ", ")
		}
	}
	return "none"
}

// serviceAccountVerdict is ServiceAccountReady once the ServiceAccount sa, its Role and
// RoleBinding exist, the Role letting it use scc (while an earlier step is not True,
// waiting says when they are updated again); what keeps them from existing is an error,
// retried.
func serviceAccountVerdict(sa, scc, waiting string) condition.Verdict {
	msg := fmt.Sprintf("pods run as ServiceAccount %s, which may use SecurityContextConstraints %s", sa, scc)
	if waiting != "" {
		msg += " " + waiting
	}
	return condition.TrueVerdict("%s", msg)
}
