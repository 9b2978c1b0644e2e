package keystoneapplicationcredential

import (
	"context"
	"fmt"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/controllers/registration"
	"github.com/keystone-stepwise/keystone-operator/internal/finalizers"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// DataPlaneRecheckInterval is how soon a deletion waiting for the data plane looks
// again, besides the NodeSet watch.
const DataPlaneRecheckInterval = time.Minute

// reconcileDelete revokes every credential this object created, then lets its Secrets
// go (a consumer's finalizer on one keeps it until the consumer lets go: never removed
// here), then releases the KeystoneAPI. For a data plane service it first waits until
// every NodeSet deployed the current Secrets. A KeystoneAPI that is gone, or being
// deleted with its Keystone, takes the credentials with it.
func (r *Reconciler) reconcileDelete(ctx context.Context, s *scope) (ctrl.Result, error) {
	ac := s.ac
	if why, err := r.dataPlaneLag(ctx, ac); err != nil || why != "" {
		if why != "" {
			s.round.MarkFalse(keystonev1.KeystoneApplicationCredentialCleanupReady, condition.Requested, "deleting: %s", why)
		}
		return ctrl.Result{RequeueAfter: DataPlaneRecheckInterval}, err
	}
	api, _, _, err := registration.KeystoneAPI(ctx, r.Client, ac.Namespace)
	if err != nil {
		return ctrl.Result{}, err
	}
	if api != nil && registration.KeystoneStays(api) && controllerutil.ContainsFinalizer(api, holdFinalizer(ac)) {
		if done, err := r.revokeAll(ctx, s, api); err != nil || !done {
			return ctrl.Result{}, err
		}
	}
	secrets, err := r.ownedSecrets(ctx, ac)
	if err != nil {
		return ctrl.Result{}, err
	}
	for i := range secrets {
		if err := finalizers.Remove(ctx, r.Client, &secrets[i], ProtectionFinalizer, upstreamProtectionFinalizer); err != nil {
			return ctrl.Result{}, err
		}
	}
	if err := registration.Release(ctx, r.Client, ac.Namespace, holdFinalizer(ac)); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, finalizers.Remove(ctx, r.Client, ac, Finalizer, finalizers.UpstreamOwn("applicationcredential"))
}

// revokeAll revokes, with the admin's credentials alone (the user's password may be
// gone), every credential this object created: those its Secrets and status record,
// and any marked as its own. done is false, with a step saying why, when it cannot yet.
func (r *Reconciler) revokeAll(ctx context.Context, s *scope, api *keystonev1.KeystoneAPI) (done bool, err error) {
	step := keystonev1.KeystoneApplicationCredentialCleanupReady
	admin, ok, err := registration.CleanupCredentials(ctx, r.Client, api)
	if err != nil {
		return false, err
	}
	if !ok {
		s.round.MarkFalse(step, condition.DependencyNotFound, "revoking: %s", registration.AdminMissing(api))
		return false, fmt.Errorf("revoking the credentials of %s: %s", s.ac.Name, registration.AdminMissing(api))
	}
	fail := func(err error) (bool, error) {
		_, err = registration.Failed(s.round, r.Keystone, admin, step, credentialFailed, err)
		return false, fmt.Errorf("revoking the credentials of %s: %w", s.ac.Name, err)
	}
	kc, err := r.Keystone.Get(ctx, admin)
	if err != nil {
		return fail(err)
	}
	userID, err := kc.FindUserID(ctx, "default", s.ac.Spec.UserName)
	if err != nil {
		return fail(err)
	}
	if userID == "" {
		// Keystone deleted the user's credentials with the user.
		return true, nil
	}
	ids := map[string]bool{}
	if s.ac.Status.ACID != "" {
		ids[s.ac.Status.ACID] = true
	}
	secrets, err := r.ownedSecrets(ctx, s.ac)
	if err != nil {
		return false, err
	}
	for _, secret := range secrets {
		if id := string(secret.Data[keystonev1.ACIDSecretKey]); id != "" {
			ids[id] = true
		}
	}
	marked, err := kc.OwnedAppCreds(ctx, userID, owner(s.ac))
	if err != nil {
		return fail(err)
	}
	for _, id := range marked {
		ids[id] = true
	}
	for id := range ids {
		if err := kc.DeleteAppCred(ctx, userID, id); err != nil {
			return fail(err)
		}
	}
	return true, nil
}
