package keystoneservice

import (
	"testing"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
)

// TestRefusedIndex: refusedIndex holds a KeystoneService refused a service or a user
// another holds (InvalidInput on KeystoneServiceReady or ServiceUserReady), and no other:
// not one Ready, waiting for something else, or refused by its KeystoneAPI's policy.
func TestRefusedIndex(t *testing.T) {
	g := NewWithT(t)
	with := func(conditions ...lc.Condition) *keystonev1.KeystoneService {
		return &keystonev1.KeystoneService{Status: keystonev1.KeystoneServiceStatus{Conditions: conditions}}
	}
	state := func(step lc.Type, status corev1.ConditionStatus, reason lc.Reason) lc.Condition {
		return lc.Condition{Type: step, Status: status, Reason: reason}
	}
	g.Expect(refusedOf(with(state(keystonev1.KeystoneServiceServiceReady, corev1.ConditionFalse, "InvalidInput")))).
		To(Equal([]string{refusedKey}), "a service another holds")
	g.Expect(refusedOf(with(state(keystonev1.KeystoneServiceServiceReady, corev1.ConditionTrue, "Ready"),
		state(keystonev1.KeystoneServiceUserReady, corev1.ConditionFalse, "InvalidInput")))).
		To(Equal([]string{refusedKey}), "a user another holds")
	for what, svc := range map[string]*keystonev1.KeystoneService{
		"no status yet":        with(),
		"Ready":                with(state(keystonev1.KeystoneServiceServiceReady, corev1.ConditionTrue, "Ready")),
		"Keystone unreachable": with(state(keystonev1.KeystoneServiceServiceReady, corev1.ConditionFalse, "ServiceUnavailable")),
		"a password conflict":  with(state(keystonev1.KeystoneServiceUserReady, corev1.ConditionFalse, "PasswordConflict")),
		"the policy's refusal": with(state(keystonev1.KeystoneServiceInputReady, corev1.ConditionFalse, "NotAllowed")),
	} {
		g.Expect(refusedOf(svc)).To(BeEmpty(), what)
	}
}
