package keystoneapplicationcredential

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/controllers/registration"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	"github.com/openstack-k8s-operators/lib-common/modules/common/util"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

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

// reconcileCredential marks KeystoneApplicationCredentialReady (credentialVerdict): the
// current credential exists in Keystone. A new one is made, as the user, when there is
// none, when its Secret or the credential itself is gone, when the roles, access rules or
// unrestricted flag changed, or when its rotation is due.
func (r *Reconciler) reconcileCredential(ctx context.Context, s *scope) (ctrl.Result, error) {
	step := keystonev1.KeystoneApplicationCredentialCredentialReady
	if !r.Keystone.Authenticated(s.user) {
		if done, err := r.beforeLogin(ctx, s); err != nil || done {
			return ctrl.Result{}, err
		}
	}
	kc, err := r.Keystone.Get(ctx, s.user)
	if err != nil {
		return r.userFailed(s, step, err)
	}
	if s.otherAdmins[kc.UserID()] {
		// A session held from before another namespace recorded its admin.
		s.Round.Apply(step, otherAdminVerdict(s.ac.Spec.UserName, s.ac.Spec.UserName))
		return ctrl.Result{}, nil
	}
	s.userClient = kc
	why, err := r.replacementReason(ctx, s)
	if err != nil {
		return s.FailedAs(s.user, step, credentialFailed, err)
	}
	if why == "" {
		s.Round.Apply(step, credentialVerdict(s.ac, ""))
		return ctrl.Result{}, nil
	}
	return r.createCredential(ctx, s, why)
}

// replacementReason says why the current credential must be replaced; "" when it need not.
func (r *Reconciler) replacementReason(ctx context.Context, s *scope) (string, error) {
	st := s.ac.Status
	if why := scheduledReplacement(s.ac, r.Clock.Now()); why != "" {
		return why, nil
	}
	secret := &corev1.Secret{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: s.ac.Namespace, Name: st.SecretName}, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Sprintf("its secret %s is gone", st.SecretName), nil
		}
		return "", fmt.Errorf("reading secret %s: %w", st.SecretName, err)
	}
	// Asked by the admin, who may read every user's: its "no such credential" is the truth.
	admin, err := r.Keystone.Get(ctx, s.Admin)
	if err != nil {
		return "", err
	}
	owner, err := admin.AppCredUser(ctx, st.ACID)
	switch {
	case err != nil:
		return "", err
	case owner == "":
		return fmt.Sprintf("Keystone no longer has credential %s", st.ACID), nil
	case owner != s.userClient.UserID():
		return fmt.Sprintf("it belongs to user %s, not to user %s (%s)", owner, s.ac.Spec.UserName, s.userClient.UserID()), nil
	}
	return "", nil
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
	if v, ok := refusedVerdict(spec, s.user.URL, err); ok {
		s.Round.Apply(step, v)
		return ctrl.Result{}, err
	}
	if err != nil {
		return s.FailedAs(s.user, step, credentialFailed, err)
	}
	secret, err := r.createSecret(ctx, s.ac, created, userID)
	if err != nil {
		// No credential without its Secret: nobody could use it, nobody would revoke it.
		return ctrl.Result{}, errors.Join(err, kc.DeleteAppCred(ctx, created.ID))
	}
	st := &s.ac.Status
	rotation, secretGone := st.ACID != "", strings.HasPrefix(why, "its secret")
	switch {
	case secretGone:
		// Its Secret is gone, so no consumer can use the old credential: revoked at once,
		// by the admin (it may be another user's, before a change of userName).
		if err := r.revoke(ctx, s, st.ACID); err != nil {
			return ctrl.Result{}, err
		}
	case rotation:
		st.PreviousSecretName, st.PreviousACID = st.SecretName, st.ACID
	}
	expires := created.ExpiresAt
	if expires.IsZero() {
		expires = want.ExpiresAt
	}
	st.ACID, st.SecretName, st.SecurityHash = created.ID, secret.Name, securityHash(spec)
	st.CreatedAt, st.ExpiresAt = &metav1.Time{Time: now.UTC().Truncate(time.Second)}, &metav1.Time{Time: expires.UTC().Truncate(time.Second)}
	st.RotationEligibleAt = &metav1.Time{Time: rotationDue(s.ac)}
	s.created = true
	s.Round.Apply(step, credentialVerdict(s.ac, why))
	if rotation {
		st.LastRotated = &metav1.Time{Time: now.UTC().Truncate(time.Second)}
		s.Round.Apply(keystonev1.KeystoneApplicationCredentialRotationReady, rotationVerdict(s.ac, why))
	}
	return ctrl.Result{}, nil
}

// beforeLogin looks up, as the admin, the user a login is about to send a password for:
// Keystone's admin, whatever name reached it, and another namespace's admin
// (registration.OtherAdmins) are refused (NotAllowed), as are a user Keystone finds under
// another name and one another namespace registered or uses (identity.OtherNamespaceUser:
// InvalidInput); one that does not exist is not logged in as
// (authenticationVerdict: a refusal would be remembered for a user that may yet be
// created). The user's record of its password's source joins the login's source, so
// that a password its KeystoneService sets anew is tried again, a refused one never
// (identity.Clients.Get). done tells that the step is marked and the round goes no
// further.
func (r *Reconciler) beforeLogin(ctx context.Context, s *scope) (done bool, err error) {
	step := keystonev1.KeystoneApplicationCredentialCredentialReady
	admin, err := r.Keystone.Get(ctx, s.Admin)
	if err != nil {
		_, err = s.Failed(step, credentialFailed, err)
		return true, err
	}
	u, err := admin.LookUpUser(ctx, "default", s.ac.Spec.UserName)
	var self *identity.AdminUserError
	var otherName *identity.OtherNameError
	var federated *identity.FederatedUserError
	switch {
	case errors.As(err, &self):
		s.Round.Apply(step, registration.NotAllowedVerdict(fmt.Sprintf("spec.userName: %v", self)))
		return true, nil
	case errors.As(err, &otherName):
		s.Round.Apply(step, condition.FalseVerdict(condition.InvalidInput, "spec.userName: %v (nothing is written)", otherName))
		return true, nil
	case errors.As(err, &federated):
		s.Round.Apply(step, condition.FalseVerdict(condition.InvalidInput, "spec.userName: %v (nothing is written)", federated))
		return true, nil
	case err != nil:
		_, err = s.Failed(step, credentialFailed, err)
		return true, err
	case u == nil:
		s.Round.Apply(step, authenticationVerdict(s.ac.Spec, true))
		return true, fmt.Errorf("user %s does not exist in Keystone (yet)", s.ac.Spec.UserName)
	}
	if s.otherAdmins[u.ID] {
		s.Round.Apply(step, otherAdminVerdict(s.ac.Spec.UserName, u.Name))
		return true, nil
	}
	if err := identity.OtherNamespaceUser(u, s.ac.Namespace); err != nil {
		s.Round.Apply(step, condition.FalseVerdict(condition.InvalidInput,
			"spec.userName: %v: a namespace logs in only as its own users (nothing is written)", err))
		return true, nil
	}
	s.user.Source += " user " + u.ID + " " + u.PasswordFrom
	return false, nil
}

// otherAdminVerdict refuses the user spec.userName found as name: the admin of another
// namespace's KeystoneAPI (registration.OtherAdmins), never logged in as.
func otherAdminVerdict(asked, name string) condition.Verdict {
	return registration.NotAllowedVerdict(fmt.Sprintf("spec.userName: %v",
		&identity.AdminUserError{Asked: asked, Name: name, Other: true}))
}

// userFailed reports a failure to authenticate as the service user
// (authenticationVerdict): Keystone refused the password, now or at an earlier login
// that is not tried again (identity.LoginRefusedError).
func (r *Reconciler) userFailed(s *scope, step lc.Type, err error) (ctrl.Result, error) {
	if identity.StatusCode(err) != 401 {
		return s.FailedAs(s.user, step, credentialFailed, err)
	}
	s.Round.Apply(step, authenticationVerdict(s.ac.Spec, false))
	return ctrl.Result{}, fmt.Errorf("authenticating as %s: %w", s.ac.Spec.UserName, err)
}
