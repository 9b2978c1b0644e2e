package keystoneapplicationcredential

import (
	"context"
	"fmt"
	"slices"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/controllers/registration"
	"github.com/keystone-stepwise/keystone-operator/internal/access"
	"github.com/keystone-stepwise/keystone-operator/internal/finalizers"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// DataPlaneRecheckInterval is how soon a deletion waiting for the data plane looks
// again, besides the NodeSet watch.
const DataPlaneRecheckInterval = time.Minute

// reconcileDelete revokes every credential this object created, then lets its Secrets
// go (a consumer's finalizer on one keeps it until the consumer lets go: never removed
// here), then releases the KeystoneAPI. For a data plane service it first waits until
// every NodeSet deployed the current Secrets, while its KeystoneAPI stays: a KeystoneAPI
// that is gone, or being deleted, waits on no data plane (one deleted with its Keystone
// takes the credentials with it; in external mode they are revoked at once, as
// reconcileKeystoneAPI does).
func (r *Reconciler) reconcileDelete(ctx context.Context, s *scope) (ctrl.Result, error) {
	ac := s.ac
	api, err := access.Lookup(ctx, r.Client, ac.Namespace)
	if err != nil {
		return ctrl.Result{}, err
	}
	if api != nil && controllerutil.ContainsFinalizer(api, holdFinalizer(ac)) {
		if result, done, err := r.leaveKeystone(ctx, s, api); err != nil || !done {
			return result, err
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

// leaveKeystone revokes, for a deletion, what this object made in api's Keystone: once
// the data plane deployed the current Secrets, while api stays; at once while api is
// being deleted with its Keystone staying (external mode); nothing when api takes its
// Keystone with it. done is false while it waits.
func (r *Reconciler) leaveKeystone(ctx context.Context, s *scope, api *keystonev1.KeystoneAPI) (ctrl.Result, bool, error) {
	if api.DeletionTimestamp.IsZero() {
		if why, err := r.dataPlaneLag(ctx, s.ac); err != nil || why != "" {
			if why != "" {
				s.Round.Apply(keystonev1.KeystoneApplicationCredentialCleanupReady, dataPlaneVerdict(why))
			}
			return ctrl.Result{RequeueAfter: DataPlaneRecheckInterval}, false, err
		}
	}
	if !registration.KeystoneStays(api) {
		return ctrl.Result{}, true, nil
	}
	done, err := r.revokeAll(ctx, s, api)
	return ctrl.Result{}, done, err
}

// revokeAll revokes, with the admin's credentials alone (the user's password may be
// gone), every credential this object created: those its Secrets and status record,
// and any marked as its own. done is false, with a step saying why, when it cannot yet.
func (r *Reconciler) revokeAll(ctx context.Context, s *scope, api *keystonev1.KeystoneAPI) (done bool, err error) {
	step := keystonev1.KeystoneApplicationCredentialCleanupReady
	missing, err := s.OpenCleanup(ctx, r.Client, step, api, "revoking")
	if err != nil {
		return false, err
	}
	// giveUp ends a revocation that failed (Session.GiveUp): what stays in Keystone is
	// every credential this object made.
	giveUp := func(err error) (bool, error) {
		what := fmt.Sprintf("application credentials of user %s (current %s)", s.ac.Spec.UserName, s.ac.Status.ACID)
		err = s.GiveUp(step, s.ac, api, what, err)
		return err == nil, err
	}
	if missing != nil {
		return giveUp(fmt.Errorf("revoking the credentials of %s: %w", s.ac.Name, missing))
	}
	admin := s.Admin
	fail := func(err error) (bool, error) {
		_, err = s.FailedAs(admin, step, credentialFailed, err)
		return giveUp(fmt.Errorf("revoking the credentials of %s: %w", s.ac.Name, err))
	}
	kc, err := r.Keystone.Get(ctx, admin)
	if err != nil {
		return fail(err)
	}
	ids, err := r.madeCredentials(ctx, s, kc)
	if err != nil {
		return fail(err)
	}
	for id := range ids {
		// Keystone finds it by its ID, whoever's it is; one gone with its user is done.
		if err := kc.DeleteAppCred(ctx, id); err != nil {
			return fail(err)
		}
	}
	return true, nil
}

// madeCredentials returns the IDs of every credential this object made: those its
// status records, those its Secrets record that are provably its own (revocable: a
// Warning Event names each that is not, and stays valid), and those marked as its own in
// Keystone among the spec's user's.
func (r *Reconciler) madeCredentials(ctx context.Context, s *scope, kc *identity.Client) (sets.Set[string], error) {
	ids := sets.New[string]()
	for _, id := range []string{s.ac.Status.ACID, s.ac.Status.PreviousACID} {
		if id != "" {
			ids.Insert(id)
		}
	}
	secrets, err := r.ownedSecrets(ctx, s.ac)
	if err != nil {
		return nil, err
	}
	for _, secret := range secrets {
		id := string(secret.Data[keystonev1.ACIDSecretKey])
		if id == "" || ids.Has(id) {
			continue
		}
		// The user's password may be gone at a deletion: no user to compare with.
		ok, why, err := r.revocable(ctx, s.ac, kc, "", id)
		if err != nil {
			return nil, err
		}
		if !ok {
			r.Reporter.Recorder.Eventf(s.ac, corev1.EventTypeWarning, "CredentialNotRevoked", "secret %s names %s: not revoked", secret.Name, why)
			continue
		}
		ids.Insert(id)
	}
	userID, err := kc.FindUserID(ctx, "default", s.ac.Spec.UserName)
	if err != nil || userID == "" {
		return ids, err
	}
	marked, err := kc.OwnedAppCreds(ctx, userID, r.owner(s.ac))
	if err != nil {
		return nil, err
	}
	return ids.Insert(marked...), nil
}

// releaseGone releases the protection (this suite's finalizer, and keystone-operator's)
// of the Secrets a KeystoneApplicationCredential named key left when it was removed
// without its deletion running (its finalizer stripped by hand): nothing else ever
// would, and they would never go. Their credentials are not revoked (a Secret proves no
// credential this object's: revocable), and a Warning Event on each Secret says so. A
// consumer's finalizer stays: it releases the Secret itself. An object of that name
// created again keeps its own Secrets.
func (r *Reconciler) releaseGone(ctx context.Context, key types.NamespacedName) error {
	current := &keystonev1.KeystoneApplicationCredential{}
	err := r.Uncached().Get(ctx, key, current)
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("reading KeystoneApplicationCredential %s: %w", key.Name, err)
	}
	secrets := &corev1.SecretList{}
	if err := r.List(ctx, secrets, client.InNamespace(key.Namespace)); err != nil {
		return fmt.Errorf("listing the secrets of %s: %w", key.Namespace, err)
	}
	for i := range secrets.Items {
		secret := &secrets.Items[i]
		ref := metav1.GetControllerOf(secret)
		if ref == nil || ref.Kind != Kind || ref.Name != key.Name || ref.UID == current.UID ||
			!slices.ContainsFunc([]string{ProtectionFinalizer, upstreamProtectionFinalizer}, func(f string) bool {
				return controllerutil.ContainsFinalizer(secret, f)
			}) {
			continue
		}
		if err := finalizers.Remove(ctx, r.Client, secret, ProtectionFinalizer, upstreamProtectionFinalizer); err != nil {
			return err
		}
		r.Reporter.Recorder.Eventf(secret, corev1.EventTypeWarning, "ProtectionReleased",
			"released: KeystoneApplicationCredential %s was removed without its deletion running; the credential %s names "+
				"is not revoked", key.Name, secret.Data[keystonev1.ACIDSecretKey])
	}
	return nil
}
