package testutil

import (
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
)

// Verdict is what a decision's table test compares of a condition.Verdict: status,
// reason, severity and message.
type Verdict struct {
	True     bool
	Reason   lc.Reason
	Severity lc.Severity
	Message  string
}

// Brief is v as a table test compares it.
func Brief(v condition.Verdict) Verdict {
	return Verdict{True: v.True, Reason: v.Reason.Name, Severity: v.Reason.Severity, Message: v.Message}
}
