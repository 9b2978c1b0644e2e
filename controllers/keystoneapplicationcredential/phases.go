package keystoneapplicationcredential

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/keystone-stepwise/keystone-operator/internal/access"
	"net/http"
	"strings"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/controllers/registration"
	"github.com/keystone-stepwise/keystone-operator/internal/finalizers"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	"github.com/openstack-k8s-operators/lib-common/modules/common/util"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

const (
	// ProtectionFinalizer keeps a credential's Secret until the credential is revoked.
	ProtectionFinalizer = "keystone.openstack.org/ac-secret-protection"
	// upstreamProtectionFinalizer is keystone-operator's name for ProtectionFinalizer,
	// released too on Secrets created before a switch to this suite.
	upstreamProtectionFinalizer = "openstack.org/ac-secret-protection"
	// UserIDAnnotation records on a credential's Secret the ID of the user the credential
	// belongs to: after a change of userName it is revoked as that user's (by the admin).
	UserIDAnnotation = "keystone.openstack.org/user-id"
	// serviceProject is where service users and their credentials live.
	serviceProject = "service"
	day            = 24 * time.Hour
)

// holdFinalizer is the finalizer a KeystoneApplicationCredential puts on its KeystoneAPI.
func holdFinalizer(ac *keystonev1.KeystoneApplicationCredential) string {
	return finalizers.For("keystoneapplicationcredential", ac.Name)
}

// owner is how this KeystoneApplicationCredential marks what it creates in Keystone: itself, and
// the cluster it lives in (identity.OwnerMark).
func (r *Reconciler) owner(ac *keystonev1.KeystoneApplicationCredential) string {
	return identity.OwnerMark("KeystoneApplicationCredential", ac, r.ClusterID)
}

// secretName is the Secret of a credential: "ac-<service>-<credential ID>-secret".
func secretName(ac *keystonev1.KeystoneApplicationCredential, id string) string {
	return fmt.Sprintf("ac-%s-%s-secret", keystonev1.GetServiceNameFromACCR(ac.Name), strings.ReplaceAll(strings.ToLower(id), "_", "-"))
}

// securityHash is a digest of the fields whose change replaces the credential at once:
// roles, access rules, unrestricted. Public values only. It is keystone-operator's
// (lib-common's ObjectHash of the same struct), so that a credential it made is not
// replaced when this suite takes over.
func securityHash(spec keystonev1.KeystoneApplicationCredentialSpec) string {
	hash, _ := util.ObjectHash(securityFields(spec)) // a struct of strings and bools always encodes
	return hash
}

// securityFields are the fields securityHash covers, in keystone-operator's encoding.
func securityFields(spec keystonev1.KeystoneApplicationCredentialSpec) any {
	return struct {
		Roles        []string
		AccessRules  []keystonev1.ACRule
		Unrestricted bool
	}{spec.Roles, spec.AccessRules, spec.Unrestricted}
}

// legacySecurityHash is the hex digest this suite recorded before it wrote
// keystone-operator's: still accepted, so that an upgrade replaces nothing.
func legacySecurityHash(spec keystonev1.KeystoneApplicationCredentialSpec) string {
	data, _ := json.Marshal(securityFields(spec))
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// securityChanged tells whether recorded, the hash of the current credential, is of
// other roles, access rules or unrestricted flag than spec's. An empty one (a credential
// made by a keystone-operator that did not record it yet) is taken as current, as
// keystone-operator takes it.
func securityChanged(recorded string, spec keystonev1.KeystoneApplicationCredentialSpec) bool {
	return recorded != "" && recorded != securityHash(spec) && recorded != legacySecurityHash(spec)
}

// rotationDue is when the current credential is replaced: gracePeriodDays before it expires.
func rotationDue(ac *keystonev1.KeystoneApplicationCredential) time.Time {
	if ac.Status.ExpiresAt == nil {
		return time.Time{}
	}
	return ac.Status.ExpiresAt.Add(-time.Duration(ac.Spec.GracePeriodDays) * day)
}

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
	admin, ok, err := access.Credentials(ctx, r.Client, api)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !ok {
		s.Round.MarkFalse(step, condition.DependencyNotFound, "%s", access.Missing(api))
		return ctrl.Result{}, nil
	}
	s.API, s.Admin = api, admin
	return ctrl.Result{}, finalizers.Add(ctx, r.Client, api, holdFinalizer(s.ac))
}

// reconcileInput marks InputReady: the service user's password.
func (r *Reconciler) reconcileInput(ctx context.Context, s *scope) (ctrl.Result, error) {
	step := keystonev1.KeystoneApplicationCredentialInputReady
	spec := s.ac.Spec
	secret := &corev1.Secret{}
	err := r.Get(ctx, client.ObjectKey{Namespace: s.ac.Namespace, Name: spec.Secret}, secret)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("reading secret %s: %w", spec.Secret, err)
	}
	password := secret.Data[spec.PasswordSelector]
	if err != nil || len(password) == 0 {
		s.Round.MarkFalse(step, condition.DependencyNotFound, "secret %s with key %s not found", spec.Secret, spec.PasswordSelector)
		return ctrl.Result{}, nil
	}
	s.user = identity.Credentials{URL: s.Admin.URL, User: spec.UserName, Password: string(password),
		Project: serviceProject, Domain: "Default", CABundle: s.Admin.CABundle}
	s.Round.MarkTrue(step, "password of user %s found in secret %s", spec.UserName, spec.Secret)
	return ctrl.Result{}, nil
}

// reconcileCredential marks KeystoneApplicationCredentialReady: the current credential
// exists in Keystone. A new one is made, as the user, when there is none, when its
// Secret or the credential itself is gone, when the roles, access rules or
// unrestricted flag changed, or when its rotation is due.
func (r *Reconciler) reconcileCredential(ctx context.Context, s *scope) (ctrl.Result, error) {
	step := keystonev1.KeystoneApplicationCredentialCredentialReady
	kc, err := r.Keystone.Get(ctx, s.user)
	if err != nil {
		return r.userFailed(ctx, s, step, err)
	}
	s.userClient = kc
	why, err := r.replacementReason(ctx, s)
	if err != nil {
		return s.FailedAs(s.user, step, credentialFailed, err)
	}
	st := &s.ac.Status
	if why == "" {
		s.Round.MarkTrue(step, "credential %s of user %s expires at %s", st.ACID, s.ac.Spec.UserName, st.ExpiresAt.UTC().Format(time.RFC3339))
		return ctrl.Result{}, nil
	}
	return r.createCredential(ctx, s, why)
}

// replacementReason says why the current credential must be replaced; "" when it need not.
func (r *Reconciler) replacementReason(ctx context.Context, s *scope) (string, error) {
	st := s.ac.Status
	switch {
	case st.ACID == "":
		return "the first credential", nil
	case securityChanged(st.SecurityHash, s.ac.Spec):
		return "its roles, access rules or unrestricted flag changed", nil
	case !r.Clock.Now().Before(rotationDue(s.ac)):
		return fmt.Sprintf("its rotation was due at %s", rotationDue(s.ac).UTC().Format(time.RFC3339)), nil
	}
	secret := &corev1.Secret{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: s.ac.Namespace, Name: st.SecretName}, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Sprintf("its secret %s is gone", st.SecretName), nil
		}
		return "", fmt.Errorf("reading secret %s: %w", st.SecretName, err)
	}
	if recorded := secret.Annotations[UserIDAnnotation]; recorded != "" && recorded != s.userClient.UserID() {
		return fmt.Sprintf("it belongs to user %s, not to user %s (%s)", recorded, s.ac.Spec.UserName, s.userClient.UserID()), nil
	}
	exists, err := s.userClient.AppCredExists(ctx, s.userClient.UserID(), st.ACID)
	if err != nil || exists {
		return "", err
	}
	return fmt.Sprintf("Keystone no longer has credential %s", st.ACID), nil
}

// createCredential makes a new credential and its Secret; the current one, if any,
// becomes the previous one (kept while consumers use it), unless its Secret is gone.
func (r *Reconciler) createCredential(ctx context.Context, s *scope, why string) (ctrl.Result, error) {
	step := keystonev1.KeystoneApplicationCredentialCredentialReady
	kc, userID, spec := s.userClient, s.userClient.UserID(), s.ac.Spec
	if err := r.sweepOrphans(ctx, s); err != nil {
		return s.FailedAs(s.user, step, credentialFailed, err)
	}
	now := r.Clock.Now()
	want := identity.AppCredSpec{Name: fmt.Sprintf("%s-%s", s.ac.Name, rand.String(5)), Owner: r.owner(s.ac), Roles: spec.Roles,
		Unrestricted: spec.Unrestricted, ExpiresAt: now.Add(time.Duration(spec.ExpirationDays) * day)}
	for _, rule := range spec.AccessRules {
		want.AccessRules = append(want.AccessRules, identity.AccessRule{Service: rule.Service, Path: rule.Path, Method: rule.Method})
	}
	created, err := kc.CreateAppCred(ctx, want)
	if identity.StatusCode(err) == http.StatusBadRequest && strings.Contains(identity.Message(err), "unassigned role") {
		// The user's KeystoneService may be assigning the role right now: retried.
		s.Round.MarkFalse(step, roleNotAssigned, "Keystone at %s refused: %s: user %s needs roles %v on project %s",
			s.user.URL, identity.Message(err), spec.UserName, spec.Roles, serviceProject)
		return ctrl.Result{}, err
	}
	if err != nil {
		return s.FailedAs(s.user, step, credentialFailed, err)
	}
	secret, err := r.createSecret(ctx, s.ac, created, userID)
	if err != nil {
		// No credential without its Secret: nobody could use it, nobody would revoke it.
		return ctrl.Result{}, errors.Join(err, kc.DeleteAppCred(ctx, userID, created.ID))
	}
	st := &s.ac.Status
	rotation, secretGone := st.ACID != "", strings.HasPrefix(why, "its secret")
	switch {
	case secretGone:
		// Its Secret is gone, so no consumer can use the old credential: revoked at once.
		if err := kc.DeleteAppCred(ctx, userID, st.ACID); err != nil {
			return ctrl.Result{}, err
		}
	case rotation:
		st.PreviousSecretName = st.SecretName
	}
	expires := created.ExpiresAt
	if expires.IsZero() {
		expires = want.ExpiresAt
	}
	st.ACID, st.SecretName, st.SecurityHash = created.ID, secret.Name, securityHash(spec)
	st.CreatedAt, st.ExpiresAt = &metav1.Time{Time: now.UTC().Truncate(time.Second)}, &metav1.Time{Time: expires.UTC().Truncate(time.Second)}
	st.RotationEligibleAt = &metav1.Time{Time: rotationDue(s.ac)}
	s.created = true
	s.Round.MarkDone(step, credentialCreated, "credential %s created for user %s (%s); it expires at %s", created.ID,
		spec.UserName, why, st.ExpiresAt.UTC().Format(time.RFC3339))
	if rotation {
		st.LastRotated = &metav1.Time{Time: now.UTC().Truncate(time.Second)}
		s.Round.MarkDone(keystonev1.KeystoneApplicationCredentialRotationReady, rotatedReason, "credential %s replaced: %s", created.ID, why)
	}
	return ctrl.Result{}, nil
}

// userFailed reports a failure to authenticate as the service user: Keystone answers
// 401 alike for a user that does not exist and for a wrong password, so the admin looks
// the user up to say which. Both may be transient (the KeystoneService that creates the
// user and sets its password may not have yet): a Warning, retried.
func (r *Reconciler) userFailed(ctx context.Context, s *scope, step lc.Type, err error) (ctrl.Result, error) {
	if identity.StatusCode(err) != 401 {
		return s.FailedAs(s.user, step, credentialFailed, err)
	}
	user := s.ac.Spec.UserName
	why := fmt.Sprintf("Keystone refused the password of user %s from secret %s", user, s.ac.Spec.Secret)
	if admin, aerr := r.Keystone.Get(ctx, s.Admin); aerr == nil {
		if id, ferr := admin.FindUserID(ctx, "default", user); ferr == nil && id == "" {
			why = fmt.Sprintf("user %s does not exist in Keystone (yet)", user)
		}
	}
	s.Round.MarkFalse(step, userAuthenticationFailed, "%s", why)
	return ctrl.Result{}, fmt.Errorf("authenticating as %s: %w", user, err)
}

// createSecret writes the credential's Secret: immutable, owned, protected by a
// finalizer until the credential is revoked.
func (r *Reconciler) createSecret(ctx context.Context, ac *keystonev1.KeystoneApplicationCredential, cred *identity.AppCred,
	userID string) (*corev1.Secret, error) {
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: secretName(ac, cred.ID), Namespace: ac.Namespace,
			Annotations: map[string]string{UserIDAnnotation: userID},
			Labels:      map[string]string{keystonev1.ACSecretLabel: "true", keystonev1.ACServiceLabel: keystonev1.GetServiceNameFromACCR(ac.Name)},
			Finalizers:  []string{ProtectionFinalizer}},
		Immutable: ptr.To(true),
		Type:      corev1.SecretTypeOpaque,
		Data:      map[string][]byte{keystonev1.ACIDSecretKey: []byte(cred.ID), keystonev1.ACSecretSecretKey: []byte(cred.Secret)},
	}
	if err := controllerutil.SetControllerReference(ac, secret, r.Scheme()); err != nil {
		return nil, fmt.Errorf("owning secret %s: %w", secret.Name, err)
	}
	if err := r.Create(ctx, secret); err != nil {
		return nil, fmt.Errorf("creating secret %s: %w", secret.Name, err)
	}
	return secret, nil
}

// ownedSecrets lists the Secrets of this object's credentials, current and past.
func (r *Reconciler) ownedSecrets(ctx context.Context, ac *keystonev1.KeystoneApplicationCredential) ([]corev1.Secret, error) {
	list := &corev1.SecretList{}
	if err := r.List(ctx, list, client.InNamespace(ac.Namespace), client.MatchingLabels{
		keystonev1.ACSecretLabel: "true", keystonev1.ACServiceLabel: keystonev1.GetServiceNameFromACCR(ac.Name)}); err != nil {
		return nil, fmt.Errorf("listing the secrets of %s: %w", ac.Name, err)
	}
	var owned []corev1.Secret
	for _, s := range list.Items {
		if ref := metav1.GetControllerOf(&s); ref != nil && ref.UID == ac.UID {
			owned = append(owned, s)
		}
	}
	return owned, nil
}

// sweepOrphans revokes the credentials this object created that neither its status
// nor any of its Secrets records: made by a round that crashed before its Secret.
func (r *Reconciler) sweepOrphans(ctx context.Context, s *scope) error {
	kc, userID := s.userClient, s.userClient.UserID()
	ids, err := kc.OwnedAppCreds(ctx, userID, r.owner(s.ac))
	if err != nil || len(ids) == 0 {
		return err
	}
	known := map[string]bool{s.ac.Status.ACID: true}
	secrets, err := r.ownedSecrets(ctx, s.ac)
	if err != nil {
		return err
	}
	for _, secret := range secrets {
		known[string(secret.Data[keystonev1.ACIDSecretKey])] = true
	}
	for _, id := range ids {
		if !known[id] {
			if err := kc.DeleteAppCred(ctx, userID, id); err != nil {
				return err
			}
		}
	}
	return nil
}

// reconcileSecret marks ApplicationCredentialSecretReady: the current credential's
// Secret holds its AC_ID and AC_SECRET.
func (r *Reconciler) reconcileSecret(ctx context.Context, s *scope) (ctrl.Result, error) {
	step := keystonev1.KeystoneApplicationCredentialSecretReady
	st := s.ac.Status
	if s.created {
		s.Round.MarkDone(step, secretCreatedReason, "secret %s holds AC_ID and AC_SECRET of credential %s", st.SecretName, st.ACID)
		return ctrl.Result{}, nil
	}
	secret := &corev1.Secret{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: s.ac.Namespace, Name: st.SecretName}, secret); err != nil {
		return ctrl.Result{}, fmt.Errorf("reading secret %s: %w", st.SecretName, err)
	}
	if got := string(secret.Data[keystonev1.ACIDSecretKey]); got != st.ACID {
		s.Round.MarkFalse(step, condition.InvalidInput, "secret %s holds AC_ID %s, not the current credential %s", secret.Name, got, st.ACID)
		return ctrl.Result{}, nil
	}
	s.Round.MarkTrue(step, "secret %s holds AC_ID and AC_SECRET of credential %s", st.SecretName, st.ACID)
	return ctrl.Result{}, nil
}

// reconcileRotation marks ApplicationCredentialRotationReady: the next replacement is
// scheduled (a rotation made this round was reported by the credential's phase).
func (r *Reconciler) reconcileRotation(_ context.Context, s *scope) (ctrl.Result, error) {
	step := keystonev1.KeystoneApplicationCredentialRotationReady
	if c := s.Round.Get(step); c != nil && c.Reason == rotatedReason.Name {
		return ctrl.Result{}, nil
	}
	due := rotationDue(s.ac)
	s.ac.Status.RotationEligibleAt = &metav1.Time{Time: due}
	if wait := due.Sub(r.Clock.Now()); wait > 0 {
		s.requeueAfter = wait
	}
	s.Round.MarkTrue(step, "the next credential replaces %s at %s, %d days before it expires", s.ac.Status.ACID,
		due.UTC().Format(time.RFC3339), s.ac.Spec.GracePeriodDays)
	return ctrl.Result{}, nil
}

// reconcileCleanup marks ApplicationCredentialCleanupReady: every credential but the
// current one is revoked (and its Secret deleted) once no consumer holds a finalizer
// on its Secret and, for a data plane service, every NodeSet deployed the current
// Secrets; until then it is kept, and the step says for whom.
func (r *Reconciler) reconcileCleanup(ctx context.Context, s *scope) (ctrl.Result, error) {
	step := keystonev1.KeystoneApplicationCredentialCleanupReady
	ac := s.ac
	secrets, err := r.ownedSecrets(ctx, ac)
	if err != nil {
		return ctrl.Result{}, err
	}
	dataPlaneWhy, err := r.dataPlaneLag(ctx, ac)
	if err != nil {
		return ctrl.Result{}, err
	}
	var kept, revoked []string
	previousFound := false
	for i := range secrets {
		secret := &secrets[i]
		if secret.Name == ac.Status.SecretName {
			continue
		}
		previousFound = previousFound || secret.Name == ac.Status.PreviousSecretName
		if holders := consumers(secret); len(holders) > 0 {
			kept = append(kept, fmt.Sprintf("secret %s is used by %s", secret.Name, strings.Join(holders, ", ")))
			continue
		}
		if dataPlaneWhy != "" {
			kept = append(kept, fmt.Sprintf("secret %s: %s", secret.Name, dataPlaneWhy))
			continue
		}
		if err := r.revokeSecret(ctx, s, secret); err != nil {
			return s.FailedAs(s.user, step, credentialFailed, err)
		}
		revoked = append(revoked, fmt.Sprintf("%s (secret %s)", secret.Data[keystonev1.ACIDSecretKey], secret.Name))
		if secret.Name == ac.Status.PreviousSecretName {
			previousFound = false
		}
	}
	if !previousFound {
		ac.Status.PreviousSecretName = ""
	}
	switch {
	case len(revoked) > 0:
		s.Round.MarkDone(step, revokedReason, "revoked credential %s", strings.Join(revoked, ", "))
	case len(kept) > 0:
		s.Round.MarkTrue(step, "earlier credentials kept while in use: %s", strings.Join(kept, "; "))
	default:
		s.Round.MarkTrue(step, "no earlier credential to revoke")
	}
	return ctrl.Result{}, nil
}

// dataPlaneLag says why earlier credentials must wait for the data plane; "" when they
// need not (not a data plane service, no NodeSet kind, every NodeSet in sync).
func (r *Reconciler) dataPlaneLag(ctx context.Context, ac *keystonev1.KeystoneApplicationCredential) (string, error) {
	if !ac.IsEDPMService() || !r.NodeSets {
		return "", nil
	}
	inSync, why, err := nodeSetsInSync(ctx, r.Client, ac.Namespace)
	if err != nil || inSync {
		return "", err
	}
	return "waiting for the data plane: " + why, nil
}

// consumers lists the finalizers on a credential's Secret other than its protection:
// the consumers that still use it.
func consumers(secret *corev1.Secret) []string {
	var out []string
	for _, f := range secret.Finalizers {
		if f != ProtectionFinalizer && f != upstreamProtectionFinalizer {
			out = append(out, f)
		}
	}
	return out
}

// revokeSecret revokes a credential in Keystone, then lets its Secret go. A credential
// of another user than the current one (userName changed) is revoked by the admin, as
// that user's.
func (r *Reconciler) revokeSecret(ctx context.Context, s *scope, secret *corev1.Secret) error {
	if id := string(secret.Data[keystonev1.ACIDSecretKey]); id != "" {
		kc, userID := s.userClient, s.userClient.UserID()
		if recorded := secret.Annotations[UserIDAnnotation]; recorded != "" && recorded != userID {
			admin, err := r.Keystone.Get(ctx, s.Admin)
			if err != nil {
				return err
			}
			kc, userID = admin, recorded
		}
		if err := kc.DeleteAppCred(ctx, userID, id); err != nil {
			return err
		}
	}
	if err := finalizers.Remove(ctx, r.Client, secret, ProtectionFinalizer, upstreamProtectionFinalizer); err != nil {
		return err
	}
	if err := r.Delete(ctx, secret); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting secret %s: %w", secret.Name, err)
	}
	return nil
}
