package keystoneapplicationcredential

import (
	"testing"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
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
