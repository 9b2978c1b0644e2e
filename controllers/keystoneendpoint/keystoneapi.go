package keystoneendpoint

import (
	"context"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/controllers/registration"
	ctrl "sigs.k8s.io/controller-runtime"
)

// reconcileKeystoneAPI marks KeystoneAPIReady: it mirrors the namespace's KeystoneAPI
// and reads its admin's credentials. It puts no finalizer on it: the KeystoneService
// this endpoint holds keeps it, and waits for the endpoints to be removed first. When
// the KeystoneAPI is being deleted, the endpoints are removed where its Keystone stays
// (external mode), and the finalizers released.
func (r *Reconciler) reconcileKeystoneAPI(ctx context.Context, s *scope) (ctrl.Result, error) {
	step := keystonev1.KeystoneEndpointKeystoneAPIReady
	api, usable, err := registration.MirrorKeystoneAPI(ctx, r.Client, s.Round, step, s.endpoint.Namespace)
	s.found = api
	switch {
	case err != nil:
		return ctrl.Result{}, err
	case api != nil && !api.DeletionTimestamp.IsZero():
		return ctrl.Result{}, r.leave(ctx, s, api)
	case !usable:
		return ctrl.Result{}, nil
	}
	_, err = s.Open(ctx, r.Client, step, api)
	return ctrl.Result{}, err
}
