package keystoneapi

import (
	"testing"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	"github.com/keystone-stepwise/keystone-operator/tests/support/testutil"
	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
)

// verdictOf is what a table compares of a verdict (testutil.Verdict).
type verdictOf testutil.Verdict

func brief(v condition.Verdict) verdictOf { return verdictOf(testutil.Brief(v)) }

func ready(status corev1.ConditionStatus, reason lc.Reason, severity lc.Severity, msg string) lc.Conditions {
	return lc.Conditions{{Type: lc.ReadyCondition, Status: status, Reason: reason, Severity: severity, Message: msg}}
}

var (
	isReady      = ready(corev1.ConditionTrue, "Ready", "", "ok")
	notReadyInfo = ready(corev1.ConditionFalse, "Requested", lc.SeverityInfo, "deploying")
	failing      = ready(corev1.ConditionFalse, "ErrorReason", lc.SeverityError, "broken")
)

func TestTrueOnlyVerdicts(t *testing.T) {
	g := NewWithT(t)
	api := &keystonev1.KeystoneAPI{Spec: keystonev1.KeystoneAPISpec{AdminUser: "admin"}}
	waiting := "(updated once DBReady is True)"
	for _, tt := range []struct {
		got  condition.Verdict
		want verdictOf
	}{
		{jobRecordedVerdict("keystone-db-sync"), verdictOf{true, "", "", "job keystone-db-sync succeeded for the current inputs"}},
		{jobLaunchedVerdict("keystone-db-sync", false), verdictOf{false, "Created", lc.SeverityInfo, "job keystone-db-sync created"}},
		{jobLaunchedVerdict("keystone-db-sync", true), verdictOf{false, "Created", lc.SeverityInfo,
			"job keystone-db-sync is replaced for new inputs"}},
		{serviceAccountVerdict("keystone-keystone", "nonroot-v2", ""), verdictOf{true, "", "",
			"pods run as ServiceAccount keystone-keystone, which may use SecurityContextConstraints nonroot-v2"}},
		{serviceAccountVerdict("keystone-keystone", "anyuid", waiting), verdictOf{true, "", "",
			"pods run as ServiceAccount keystone-keystone, which may use SecurityContextConstraints anyuid " + waiting}},
		{openStackConfigVerdict(api, ""), verdictOf{true, "", "",
			`ConfigMap openstack-config and Secret openstack-config-secret hold the cloud "default" of user admin`}},
		{openStackConfigVerdict(api, waiting), verdictOf{true, "", "",
			"ConfigMap openstack-config and Secret openstack-config-secret as written before " + waiting}},
	} {
		g.Expect(brief(tt.got)).To(Equal(tt.want))
	}
}
