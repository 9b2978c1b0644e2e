package keystoneservice

import (
	"context"
	"fmt"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/finalizers"
	"github.com/keystone-stepwise/keystone-operator/pkg/identity"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// reconcileDelete removes the registration from Keystone (endpoints, service, user)
// and then the finalizers. When the KeystoneAPI is gone or being deleted, Keystone
// goes with it: the finalizers are released without waiting for it.
func (r *Reconciler) reconcileDelete(ctx context.Context, s *scope) (ctrl.Result, error) {
	api, _, _, err := r.keystoneAPI(ctx, s.service.Namespace)
	if err != nil {
		return ctrl.Result{}, err
	}
	if api != nil && api.DeletionTimestamp.IsZero() && controllerutil.ContainsFinalizer(api, apiFinalizer(s.service)) {
		s.api = api
		if _, err := r.reconcileInput(ctx, s); err != nil {
			return ctrl.Result{}, err
		}
		if s.admin.URL != "" {
			if err := r.deregister(ctx, s); err != nil {
				return ctrl.Result{}, err
			}
		}
	}
	if api != nil {
		r.release(ctx, s, api)
	}
	return ctrl.Result{}, finalizers.Remove(ctx, r.Client, s.service, Finalizer)
}

// deregister deletes what the KeystoneService registered.
func (r *Reconciler) deregister(ctx context.Context, s *scope) error {
	kc, err := r.Keystone.Get(ctx, s.admin)
	if err != nil {
		return fmt.Errorf("deregistering %s: %w", s.service.Spec.ServiceName, err)
	}
	spec := s.service.Spec
	err = kc.DeleteRegistration(ctx, s.service.Status.ServiceID,
		identity.ServiceSpec{Type: spec.ServiceType, Name: spec.ServiceName, Enabled: ptr.Deref(spec.Enabled, true)},
		identity.UserSpec{Name: spec.ServiceUser, DomainID: defaultDomainID})
	if err != nil {
		if identity.SessionSuspect(err) {
			r.Keystone.Forget(s.admin)
		}
		return fmt.Errorf("deregistering %s: %w", spec.ServiceName, err)
	}
	return nil
}

// release removes this KeystoneService's finalizer from the KeystoneAPI. When the
// KeystoneAPI is being deleted it first deregisters, once and best effort.
func (r *Reconciler) release(ctx context.Context, s *scope, api *keystonev1.KeystoneAPI) {
	if !controllerutil.ContainsFinalizer(api, apiFinalizer(s.service)) {
		return
	}
	if !api.DeletionTimestamp.IsZero() && s.service.DeletionTimestamp.IsZero() {
		s.api = api
		if _, err := r.reconcileInput(ctx, s); err == nil && s.admin.URL != "" {
			if err := r.deregister(ctx, s); err != nil {
				ctrl.LoggerFrom(ctx).Info("KeystoneAPI is being deleted; leaving the registration in Keystone", "error", err.Error())
			}
		}
	}
	if err := finalizers.Remove(ctx, r.Client, api, apiFinalizer(s.service)); err != nil {
		// A conflict retries through the KeystoneAPI's next watch event.
		ctrl.LoggerFrom(ctx).Info("releasing our finalizer on the KeystoneAPI failed; retrying", "error", err.Error())
	}
}
