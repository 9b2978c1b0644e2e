package keystoneapplicationcredential

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	"github.com/keystone-stepwise/keystone-operator/tests/support/testutil"
	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestHeldVerdict(t *testing.T) {
	rotated := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	ac := func(graceDays int, lastRotated *time.Time) *keystonev1.KeystoneApplicationCredential {
		a := &keystonev1.KeystoneApplicationCredential{Spec: keystonev1.KeystoneApplicationCredentialSpec{GracePeriodDays: graceDays},
			Status: keystonev1.KeystoneApplicationCredentialStatus{SecretName: "ac-glance-secret-b"}}
		if lastRotated != nil {
			a.Status.LastRotated = &metav1.Time{Time: *lastRotated}
		}
		return a
	}
	kept := []string{"secret ac-glance-secret-a is used by openstack.org/glance"}
	tests := []struct {
		name     string
		ac       *keystonev1.KeystoneApplicationCredential
		now      time.Time
		true     bool
		reason   lc.Reason
		severity lc.Severity
		message  string
		wait     time.Duration
	}{
		{"just rotated: kept while in use, the Warning's time said", ac(182, &rotated), rotated.Add(time.Hour), true, "", "",
			"kept while in use, a Warning if still at 2026-11-21T10:00:00Z: secret ac-glance-secret-a is used by openstack.org/glance", 23 * time.Hour},
		{"a day later: a Warning naming who holds it", ac(182, &rotated), rotated.Add(25 * time.Hour), false, "CredentialHeld", lc.SeverityWarning,
			"replaced at 2026-11-20T10:00:00Z and still held: secret ac-glance-secret-a is used by openstack.org/glance; " +
				"its consumers must move to secret ac-glance-secret-b", 0},
		{"a one-day grace period: the Warning at half of it", ac(1, &rotated), rotated.Add(13 * time.Hour), false, "CredentialHeld", lc.SeverityWarning,
			"replaced at 2026-11-20T10:00:00Z and still held: secret ac-glance-secret-a is used by openstack.org/glance; " +
				"its consumers must move to secret ac-glance-secret-b", 0},
		{"no rotation time recorded (keystone-operator's status): counted from now", ac(182, nil), rotated, true, "", "",
			"kept while in use, a Warning if still at 2026-11-21T10:00:00Z: secret ac-glance-secret-a is used by openstack.org/glance", 24 * time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			v, wait := heldVerdict(tt.ac, kept, tt.now)
			g.Expect([]any{v.True, v.Reason.Name, v.Reason.Severity, v.Message}).To(Equal([]any{tt.true, tt.reason, tt.severity, tt.message}))
			g.Expect(wait).To(Equal(tt.wait))
		})
	}
}

// verdictOf is what a table compares of a verdict (testutil.Verdict).
type verdictOf testutil.Verdict

func brief(v condition.Verdict) verdictOf { return verdictOf(testutil.Brief(v)) }

func TestVerdicts(t *testing.T) {
	expires := metav1.NewTime(time.Date(2027, 5, 25, 10, 0, 0, 0, time.UTC))
	spec := keystonev1.KeystoneApplicationCredentialSpec{UserName: "glance", Secret: "osp-secret", PasswordSelector: "GlancePassword", Roles: []string{"service"},
		ExpirationDays: 365, GracePeriodDays: 182}
	ac := &keystonev1.KeystoneApplicationCredential{Spec: spec, Status: keystonev1.KeystoneApplicationCredentialStatus{
		ACID: "ac2", SecretName: "ac-glance-secret-b", ExpiresAt: &expires}}
	answer := func(code int, message string) error {
		return gophercloud.ErrUnexpectedResponseCode{Actual: code, Body: []byte(`{"error": {"message": "` + message + `"}}`)}
	}
	unassigned, ok := refusedVerdict(spec, "https://keystone", answer(http.StatusBadRequest, "Trying to assign an unassigned role"))
	if !ok {
		t.Fatal("refusedVerdict: an unassigned role not recognised")
	}
	for _, err := range []error{answer(http.StatusBadRequest, "Invalid input"), answer(http.StatusForbidden, "unassigned role"), errors.New("EOF")} {
		if _, ok := refusedVerdict(spec, "https://keystone", err); ok {
			t.Errorf("refusedVerdict(%v) took it as an unassigned role", err)
		}
	}
	tests := []struct {
		name string
		got  condition.Verdict
		want verdictOf
		done bool // confirmed by the next round
	}{
		{"input: found", inputVerdict(spec), verdictOf{true, "", "", "password of user glance found in secret osp-secret"}, false},
		{"credential: standing", credentialVerdict(ac, ""), verdictOf{true, "", "", "credential ac2 of user glance expires at 2027-05-25T10:00:00Z"}, false},
		{"credential: made this round", credentialVerdict(ac, "the first credential"), verdictOf{false, "ApplicationCredentialCreated",
			lc.SeverityInfo, "credential ac2 created for user glance (the first credential); it expires at 2027-05-25T10:00:00Z"}, true},
		{"credential: a role the user lacks yet", unassigned, verdictOf{false, "RoleNotAssigned", lc.SeverityWarning,
			"Keystone at https://keystone refused: Bad Request: Trying to assign an unassigned role: user glance needs roles [service] on project service"}, false},
		{"credential: the user's password refused", authenticationVerdict(spec, false), verdictOf{false, "UserAuthenticationFailed",
			lc.SeverityWarning, "Keystone refused the password of user glance from secret osp-secret key GlancePassword; tried " +
				"again only when the secret, or the password the user's KeystoneService sets, changes (every refusal counts " +
				"towards Keystone's lockout)"}, false},
		{"credential: no such user (yet)", authenticationVerdict(spec, true), verdictOf{false, "UserAuthenticationFailed",
			lc.SeverityWarning, "user glance does not exist in Keystone (yet)"}, false},
		{"secret: made this round", secretVerdict(ac.Status, true, "ac2"), verdictOf{false, "SecretCreated", lc.SeverityInfo,
			"secret ac-glance-secret-b holds AC_ID and AC_SECRET of credential ac2"}, true},
		{"secret: another credential's", secretVerdict(ac.Status, false, "ac1"), verdictOf{false, "InvalidInput", lc.SeverityError,
			"secret ac-glance-secret-b holds AC_ID ac1, not the current credential ac2"}, false},
		{"secret: the current credential's", secretVerdict(ac.Status, false, "ac2"), verdictOf{true, "", "",
			"secret ac-glance-secret-b holds AC_ID and AC_SECRET of credential ac2"}, false},
		{"rotation: scheduled", rotationVerdict(ac, ""), verdictOf{true, "", "",
			"the next credential replaces ac2 at 2026-11-24T10:00:00Z, 182 days before it expires"}, false},
		{"rotation: replaced this round", rotationVerdict(ac, "its rotation was due at 2026-11-24T10:00:00Z"), verdictOf{false,
			"ApplicationCredentialRotated", lc.SeverityInfo, "credential ac2 replaced: its rotation was due at 2026-11-24T10:00:00Z"}, true},
		{"cleanup: revoked", cleanupVerdict([]string{"ac1 (secret ac-glance-secret-a)"}, nil), verdictOf{false,
			"ApplicationCredentialRevoked", lc.SeverityInfo, "revoked credential ac1 (secret ac-glance-secret-a)"}, true},
		{"cleanup: kept", cleanupVerdict(nil, []string{"secret ac-glance-secret-a is used by openstack.org/glance"}), verdictOf{true, "", "",
			"earlier credentials kept while in use: secret ac-glance-secret-a is used by openstack.org/glance"}, false},
		{"deleting: the data plane not yet", dataPlaneVerdict("NodeSet edpm has not deployed secret nova-cell1-compute-config as it is now"),
			verdictOf{false, "Requested", lc.SeverityInfo, "deleting: NodeSet edpm has not deployed secret nova-cell1-compute-config as it is now"}, false},
		{"cleanup: nothing left", cleanupVerdict(nil, nil), verdictOf{true, "", "", "no earlier credential to revoke"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(brief(tt.got)).To(Equal(tt.want))
			g.Expect(tt.got.Done).To(Equal(tt.done))
		})
	}
}

func TestScheduledReplacement(t *testing.T) {
	expires := metav1.NewTime(time.Date(2027, 5, 25, 10, 0, 0, 0, time.UTC))
	spec := keystonev1.KeystoneApplicationCredentialSpec{Roles: []string{"service"}, GracePeriodDays: 182}
	ac := func(acid, hash string) *keystonev1.KeystoneApplicationCredential {
		return &keystonev1.KeystoneApplicationCredential{Spec: spec,
			Status: keystonev1.KeystoneApplicationCredentialStatus{ACID: acid, SecurityHash: hash, ExpiresAt: &expires}}
	}
	due := expires.Add(-182 * day)
	tests := []struct {
		name string
		ac   *keystonev1.KeystoneApplicationCredential
		now  time.Time
		want string
	}{
		{"none yet", ac("", ""), due.Add(-time.Hour), "the first credential"},
		{"roles changed", ac("ac1", "another"), due.Add(-time.Hour), "its roles, access rules or unrestricted flag changed"},
		{"no hash recorded: kept", ac("ac1", ""), due.Add(-time.Hour), ""},
		{"the same roles", ac("ac1", securityHash(spec)), due.Add(-time.Hour), ""},
		{"rotation due", ac("ac1", securityHash(spec)), due, "its rotation was due at 2026-11-24T10:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(scheduledReplacement(tt.ac, tt.now)).To(Equal(tt.want))
		})
	}
}
