package keystoneapi

import (
	"testing"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
)

func TestRegistrationsVerdict(t *testing.T) {
	rank := map[string]int{"KeystoneService": 0, "KeystoneEndpoint": 1, "KeystoneApplicationCredential": 2}
	member := func(kind, name string, conditions lc.Conditions) condition.Member {
		return condition.Member{Kind: kind, Rank: rank[kind], Object: condition.Of(name, conditions)}
	}
	reg := func(kind, name string, status corev1.ConditionStatus, reason lc.Reason, severity lc.Severity, msg string) condition.Member {
		return member(kind, name, lc.Conditions{{Type: lc.ReadyCondition, Status: status, Reason: reason, Severity: severity, Message: msg}})
	}
	readySvc := reg("KeystoneService", "glance", corev1.ConditionTrue, "Ready", "", "all 5 steps ready")
	readyEp := reg("KeystoneEndpoint", "glance", corev1.ConditionTrue, "Ready", "", "all 3 steps ready")
	fresh := member("KeystoneApplicationCredential", "ac-nova", nil)
	progressing := reg("KeystoneEndpoint", "placement", corev1.ConditionFalse, "Requested", lc.SeverityInfo, "KeystoneServiceReady (2/3 ready): ...")
	warning := reg("KeystoneApplicationCredential", "ac-glance", corev1.ConditionFalse, "UserAuthenticationFailed", lc.SeverityWarning,
		"KeystoneApplicationCredentialReady (2/6 ready): Keystone refused user glance's password")
	failing := reg("KeystoneService", "nova", corev1.ConditionFalse, "UserFailed", lc.SeverityError, "ServiceUserReady (1/5 ready): 403")
	failingToo := reg("KeystoneEndpoint", "nova", corev1.ConditionFalse, "EndpointFailed", lc.SeverityError, "KeystoneServiceOSEndpointsReady: 400")
	count := func(ready, total int32) keystonev1.RegistrationCount {
		return keystonev1.RegistrationCount{Ready: ready, Total: total}
	}
	tests := []struct {
		name   string
		regs   []condition.Member
		counts keystonev1.KeystoneAPIRegistrations
		want   verdictOf
	}{
		{"none", nil, keystonev1.KeystoneAPIRegistrations{}, verdictOf{true, "Ready", "",
			"no KeystoneService, KeystoneEndpoint or KeystoneApplicationCredential in the namespace"}},
		{"all ready", []condition.Member{readySvc, readyEp}, keystonev1.KeystoneAPIRegistrations{KeystoneServices: count(1, 1),
			KeystoneEndpoints: count(1, 1)}, verdictOf{true, "Ready", "",
			"all 2 registrations ready (KeystoneServices: 1, KeystoneEndpoints: 1, KeystoneApplicationCredentials: 0)"}},
		{"progressing only: Info, counted, no message of theirs", []condition.Member{readySvc, progressing, fresh},
			keystonev1.KeystoneAPIRegistrations{KeystoneServices: count(1, 1), KeystoneEndpoints: count(0, 1),
				KeystoneApplicationCredentials: count(0, 1)},
			verdictOf{false, "Requested", lc.SeverityInfo, "2 of 3 registrations not ready yet, among them KeystoneEndpoint placement"}},
		{"a Warning before progress", []condition.Member{progressing, warning, readySvc}, keystonev1.KeystoneAPIRegistrations{
			KeystoneServices: count(1, 1), KeystoneEndpoints: count(0, 1), KeystoneApplicationCredentials: count(0, 1)},
			verdictOf{false, "UserAuthenticationFailed", lc.SeverityWarning, "KeystoneApplicationCredential ac-glance: " +
				"KeystoneApplicationCredentialReady (2/6 ready): Keystone refused user glance's password (2 of 3 registrations not ready)"}},
		{"an Error before a Warning; a KeystoneService before its endpoint", []condition.Member{warning, failingToo, failing},
			keystonev1.KeystoneAPIRegistrations{KeystoneServices: count(0, 1), KeystoneEndpoints: count(0, 1),
				KeystoneApplicationCredentials: count(0, 1)},
			verdictOf{false, "UserFailed", lc.SeverityError, "KeystoneService nova: ServiceUserReady (1/5 ready): 403 (3 of 3 registrations not ready)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			counts, v := registrationsVerdict(tt.regs)
			g.Expect(counts).To(Equal(tt.counts))
			got := brief(v)
			if got.True {
				got.Reason = "Ready" // Report gives a True verdict the reason Ready
			}
			g.Expect(got).To(Equal(tt.want))
		})
	}
}
