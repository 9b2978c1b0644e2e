package keystoneservice

import (
	"context"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/controllers/registration"
	"github.com/keystone-stepwise/keystone-operator/internal/finalizers"
	ctrl "sigs.k8s.io/controller-runtime"
)

func apiFinalizer(svc *keystonev1.KeystoneService) string {
	return finalizers.For("keystoneservice", svc.Name)
}

// reconcileKeystoneAPI marks KeystoneAPIReady: it mirrors the namespace's KeystoneAPI
// and puts a finalizer on it, so that Keystone outlives the registration. A KeystoneAPI
// being deleted waits for nobody: the registration is removed where its Keystone
// stays (external mode), and the finalizer released.
func (r *Reconciler) reconcileKeystoneAPI(ctx context.Context, s *scope) (ctrl.Result, error) {
	api, usable, err := registration.MirrorKeystoneAPI(ctx, r.Client, s.Round, keystonev1.KeystoneServiceKeystoneAPIReady, s.service.Namespace)
	switch {
	case err != nil:
		return ctrl.Result{}, err
	case api != nil && !api.DeletionTimestamp.IsZero():
		if registration.KeystoneStays(api) && registered(s, api) {
			if waiting, err := r.waitForEndpoints(ctx, s, keystonev1.KeystoneServiceKeystoneAPIReady,
				"KeystoneAPI "+api.Name+" is being deleted"); err != nil || waiting {
				return ctrl.Result{}, err
			}
			if done, err := r.deregister(ctx, s, api); err != nil || !done {
				return ctrl.Result{}, err
			}
		}
		return ctrl.Result{}, r.release(ctx, s, api)
	case !usable:
		return ctrl.Result{}, nil
	}
	s.API = api
	return ctrl.Result{}, finalizers.Add(ctx, r.Client, api, apiFinalizer(s.service))
}
