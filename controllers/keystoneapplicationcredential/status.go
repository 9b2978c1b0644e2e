package keystoneapplicationcredential

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
)

// The decisions of KeystoneApplicationCredential's steps: pure functions from what a
// phase observed to the step's verdict, covered reason by reason in status_test.go. A
// Keystone error is the shared registration.Session's (FailedAs); the report
// PreviousCredentialReleased is heldVerdict's.

// inputVerdict is InputReady once the user's password is found (a missing one is
// registration.PasswordMissingVerdict's).
func inputVerdict(spec keystonev1.KeystoneApplicationCredentialSpec) condition.Verdict {
	return condition.TrueVerdict("password of user %s found in secret %s", spec.UserName, spec.Secret)
}

// scheduledReplacement says why the current credential must be replaced whatever
// Keystone and its Secret hold: there is none, its roles, access rules or unrestricted
// flag changed, or its rotation is due at now; "" when none of these.
func scheduledReplacement(ac *keystonev1.KeystoneApplicationCredential, now time.Time) string {
	switch {
	case ac.Status.ACID == "":
		return "the first credential"
	case securityChanged(ac.Status.SecurityHash, ac.Spec):
		return "its roles, access rules or unrestricted flag changed"
	case !now.Before(rotationDue(ac)):
		return fmt.Sprintf("its rotation was due at %s", rotationDue(ac).UTC().Format(time.RFC3339))
	}
	return ""
}

// credentialVerdict is CredentialReady for the current credential: True while it
// stands, CredentialCreated (Info, confirmed by the next round) the round it was made,
// saying why (replacing: "" when it need not be replaced).
func credentialVerdict(ac *keystonev1.KeystoneApplicationCredential, replacing string) condition.Verdict {
	st := ac.Status
	expires := st.ExpiresAt.UTC().Format(time.RFC3339)
	if replacing == "" {
		return condition.TrueVerdict("credential %s of user %s expires at %s", st.ACID, ac.Spec.UserName, expires)
	}
	return condition.DoneVerdict(credentialCreated, "credential %s created for user %s (%s); it expires at %s", st.ACID,
		ac.Spec.UserName, replacing, expires)
}

// refusedVerdict is CredentialReady when Keystone at url refused to create a
// credential: a role the user does not have yet is RoleNotAssigned (Warning: the
// user's KeystoneService may be assigning it right now, so it is retried); ok is false
// for any other error, which is the session's (FailedAs).
func refusedVerdict(spec keystonev1.KeystoneApplicationCredentialSpec, url string, err error) (v condition.Verdict, ok bool) {
	if identity.StatusCode(err) != http.StatusBadRequest || !strings.Contains(identity.Message(err), "unassigned role") {
		return condition.Verdict{}, false
	}
	return condition.FalseVerdict(roleNotAssigned, "Keystone at %s refused: %s: user %s needs roles %v on project %s",
		url, identity.Message(err), spec.UserName, spec.Roles, serviceProject), true
}

// authenticationVerdict is CredentialReady when the user cannot be logged in as: it does
// not exist (userMissing: not tried), or Keystone refused the password of the Secret.
// Both may be transient (the KeystoneService that creates the user and sets its
// password may not have yet): UserAuthenticationFailed (Warning), retried; a refused
// password is tried again only when the Secret, or the password the user's
// KeystoneService set, changes: every refusal counts towards Keystone's lockout.
func authenticationVerdict(spec keystonev1.KeystoneApplicationCredentialSpec, userMissing bool) condition.Verdict {
	if userMissing {
		return condition.FalseVerdict(userAuthenticationFailed, "user %s does not exist in Keystone (yet)", spec.UserName)
	}
	return condition.FalseVerdict(userAuthenticationFailed, "Keystone refused the password of user %s from secret %s key %s; "+
		"tried again only when the secret, or the password the user's KeystoneService sets, changes (every refusal counts "+
		"towards Keystone's lockout)", spec.UserName, spec.Secret, spec.PasswordSelector)
}

// secretVerdict is ApplicationCredentialSecretReady from the AC_ID the current Secret
// holds (got): SecretCreated (Info, confirmed by the next round) the round it was
// made (created); one that holds another credential is InvalidInput (Error).
func secretVerdict(st keystonev1.KeystoneApplicationCredentialStatus, created bool, got string) condition.Verdict {
	switch {
	case created:
		return condition.DoneVerdict(secretCreatedReason, "secret %s holds AC_ID and AC_SECRET of credential %s", st.SecretName, st.ACID)
	case got != st.ACID:
		return condition.FalseVerdict(condition.InvalidInput, "secret %s holds AC_ID %s, not the current credential %s", st.SecretName, got, st.ACID)
	}
	return condition.TrueVerdict("secret %s holds AC_ID and AC_SECRET of credential %s", st.SecretName, st.ACID)
}

// rotationVerdict is ApplicationCredentialRotationReady: True with the next
// replacement's time; Rotated (Info, confirmed by the next round) the round a
// rotation replaced the credential, saying why (rotated: "" when none did).
func rotationVerdict(ac *keystonev1.KeystoneApplicationCredential, rotated string) condition.Verdict {
	if rotated != "" {
		return condition.DoneVerdict(rotatedReason, "credential %s replaced: %s", ac.Status.ACID, rotated)
	}
	return condition.TrueVerdict("the next credential replaces %s at %s, %d days before it expires", ac.Status.ACID,
		rotationDue(ac).UTC().Format(time.RFC3339), ac.Spec.GracePeriodDays)
}

// cleanupVerdict is ApplicationCredentialCleanupReady from what the round did with the
// earlier credentials: Revoked (Info, confirmed by the next round) for those it
// revoked; True for those kept while in use (kept says by whom), or for none left.
func cleanupVerdict(revoked, kept []string) condition.Verdict {
	switch {
	case len(revoked) > 0:
		return condition.DoneVerdict(revokedReason, "revoked credential %s", strings.Join(revoked, ", "))
	case len(kept) > 0:
		return condition.TrueVerdict("earlier credentials kept while in use: %s", strings.Join(kept, "; "))
	}
	return condition.TrueVerdict("no earlier credential to revoke")
}

// dataPlaneVerdict is ApplicationCredentialCleanupReady while a deletion waits for the
// data plane (why: which NodeSet has not deployed which Secret): Requested (Info).
func dataPlaneVerdict(why string) condition.Verdict {
	return condition.FalseVerdict(condition.Requested, "deleting: %s", why)
}

// heldVerdict is PreviousCredentialReleased while the credentials a rotation replaced are
// kept (kept says by whom): True until the warning time (the rotation, status.lastRotated,
// plus HeldWarningAfter or half the grace period), and how long until then; after it,
// CredentialHeld (Warning) naming who holds them.
func heldVerdict(ac *keystonev1.KeystoneApplicationCredential, kept []string, now time.Time) (condition.Verdict, time.Duration) {
	threshold := min(HeldWarningAfter, time.Duration(ac.Spec.GracePeriodDays)*day/2)
	rotated := now
	if ac.Status.LastRotated != nil {
		rotated = ac.Status.LastRotated.Time
	}
	warnAt := rotated.Add(threshold)
	if now.Before(warnAt) {
		return condition.TrueVerdict("kept while in use, a Warning if still at %s: %s", warnAt.UTC().Format(time.RFC3339),
			strings.Join(kept, "; ")), warnAt.Sub(now)
	}
	return condition.FalseVerdict(credentialHeld, "replaced at %s and still held: %s; its consumers must move to secret %s",
		rotated.UTC().Format(time.RFC3339), strings.Join(kept, "; "), ac.Status.SecretName), 0
}
