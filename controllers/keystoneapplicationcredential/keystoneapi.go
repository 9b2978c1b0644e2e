package keystoneapplicationcredential

import (
	"context"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/controllers/registration"
	"github.com/keystone-stepwise/keystone-operator/internal/finalizers"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// reconcileKeystoneAPI marks KeystoneAPIReady: it mirrors the namespace's KeystoneAPI,
// reads its admin's credentials and puts a finalizer on it. A KeystoneAPI being
// deleted waits for nobody: the credentials are revoked where its Keystone stays
// (external mode), and the finalizer released.
func (r *Reconciler) reconcileKeystoneAPI(ctx context.Context, s *scope) (ctrl.Result, error) {
	step := keystonev1.KeystoneApplicationCredentialKeystoneAPIReady
	api, usable, err := registration.MirrorKeystoneAPI(ctx, r.Client, s.Round, step, s.ac.Namespace)
	switch {
	case err != nil:
		return ctrl.Result{}, err
	case api != nil && !api.DeletionTimestamp.IsZero():
		if registration.KeystoneStays(api) && controllerutil.ContainsFinalizer(api, holdFinalizer(s.ac)) {
			if done, err := r.revokeAll(ctx, s, api); err != nil || !done {
				return ctrl.Result{}, err
			}
		}
		return ctrl.Result{}, finalizers.Remove(ctx, r.Client, api, holdFinalizer(s.ac))
	case !usable:
		return ctrl.Result{}, nil
	}
	if ok, err := s.Open(ctx, r.Client, step, api); err != nil || !ok {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, finalizers.Add(ctx, r.Client, api, holdFinalizer(s.ac))
}
