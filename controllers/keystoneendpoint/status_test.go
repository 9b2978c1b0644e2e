package keystoneendpoint

import (
	"testing"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	"github.com/keystone-stepwise/keystone-operator/tests/support/testutil"
	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestInvalidEndpoints(t *testing.T) {
	for _, tc := range []struct {
		name      string
		endpoints map[string]string
		problem   string
		pending   bool
		notes     string
	}{
		{"absolute URLs", map[string]string{"public": "https://glance.example.com", "internal": "http://glance-internal:9292"}, "", false, ""},
		{"heat's templates", map[string]string{"public": "http://heat-api-public:8004/v1/%(tenant_id)s",
			"internal": "http://heat-api-internal.openstack.svc:8004/v1/%(tenant_id)s"}, "", false, ""},
		{"swift's", map[string]string{"internal": "http://swift-internal:8080/v1/AUTH_%(tenant_id)s"}, "", false, ""},
		{"a template in the host", map[string]string{"internal": "http://%(compute_host)s:8774/v2.1"}, "", false, ""},
		{"a service operator's URL before its Route has a host", map[string]string{"public": "http://", "internal": "http://glance-internal:9292"},
			`waiting for a host in the public endpoint "http://" (its operator sets it once its Route has one)`, true, ""},
		{"an unknown interface", map[string]string{"private": "http://glance:9292"},
			`endpoint interface "private" is not public, internal or admin`, false, ""},
		{"a substitution Keystone does not know", map[string]string{"public": "http://heat:8004/v1/%(tenant)s"},
			`the public endpoint "http://heat:8004/v1/%(tenant)s" names "tenant", which Keystone does not substitute ` +
				`(it knows tenant_id, project_id, user_id, public_bind_host, admin_bind_host, compute_host, admin_port, public_port, public_endpoint), ` +
				`so Keystone refuses it`, false, ""},
		{"a relative URL", map[string]string{"internal": "/v2"},
			`the internal endpoint "/v2" has no scheme (such as http: or https:) followed by an address, so Keystone refuses it`, false, ""},
		{"another scheme is registered, with a note", map[string]string{"admin": "ftp://glance"}, "", false,
			`; the admin endpoint: not an http or https URL (scheme "ftp")`},
		{"no scheme but a host and port, as Keystone reads it", map[string]string{"public": "glance:9292"}, "", false,
			`; the public endpoint: not an http or https URL (scheme "glance")`},
		{"a refused URL wins over a pending one", map[string]string{"internal": "http://", "public": "http://glance/100%"},
			`the public endpoint "http://glance/100%" ends in an incomplete substitution "%" (a literal % is written %%), so Keystone refuses it`, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			problem, pending, notes := invalidEndpoints(tc.endpoints)
			if problem != tc.problem || pending != tc.pending || notes != tc.notes {
				t.Errorf("invalidEndpoints(%v) = %q, %v, %q; want %q, %v, %q", tc.endpoints, problem, pending, notes, tc.problem, tc.pending, tc.notes)
			}
		})
	}
}

// verdictOf is what a table compares of a verdict (testutil.Verdict).
type verdictOf testutil.Verdict

func brief(v condition.Verdict) verdictOf { return verdictOf(testutil.Brief(v)) }

func TestServiceVerdict(t *testing.T) {
	svc := func(ready *lc.Condition, serviceID string, deleting bool) *keystonev1.KeystoneService {
		s := &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Name: "glance", Generation: 2}}
		s.Status.ObservedGeneration, s.Status.ServiceID = 2, serviceID
		if ready != nil {
			s.Status.Conditions = lc.Conditions{*ready}
		}
		if deleting {
			s.DeletionTimestamp = &metav1.Time{Time: time.Now()}
		}
		return s
	}
	ready := &lc.Condition{Type: condition.ReadyCondition, Status: corev1.ConditionTrue}
	progressing := &lc.Condition{Type: condition.ReadyCondition, Status: corev1.ConditionFalse, Reason: "Requested",
		Severity: lc.SeverityInfo, Message: "ServiceUserReady: creating"}
	failed := &lc.Condition{Type: condition.ReadyCondition, Status: corev1.ConditionFalse, Reason: "ServiceFailed",
		Severity: lc.SeverityError, Message: "Keystone refused"}
	tests := []struct {
		name string
		svc  *keystonev1.KeystoneService
		want verdictOf
	}{
		{"missing", nil, verdictOf{false, "DependencyNotFound", lc.SeverityWarning, "KeystoneService glance not found"}},
		{"being deleted", svc(ready, "s1", true), verdictOf{false, "DependencyNotFound", lc.SeverityWarning,
			"KeystoneService glance is being deleted; its endpoints are removed"}},
		{"without status yet", svc(nil, "", false), verdictOf{false, "Requested", lc.SeverityInfo, "KeystoneService glance is not ready yet"}},
		{"progressing: its message is not repeated", svc(progressing, "", false), verdictOf{false, "Requested", lc.SeverityInfo,
			"KeystoneService glance is not ready yet"}},
		{"failed: its message is", svc(failed, "", false), verdictOf{false, "ServiceFailed", lc.SeverityError,
			"KeystoneService glance: Keystone refused"}},
		{"ready without a service ID", svc(ready, "", false), verdictOf{false, "Requested", lc.SeverityInfo,
			"KeystoneService glance: waiting for its current generation to be registered"}},
		{"ready", svc(ready, "s1", false), verdictOf{true, "", "", "KeystoneService glance is ready"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(brief(serviceVerdict("glance", tt.svc))).To(Equal(tt.want))
		})
	}
}

func TestEndpointsVerdict(t *testing.T) {
	g := NewWithT(t)
	g.Expect(brief(endpointsVerdict(map[string]string{"public": "https://glance.example.com", "internal": "http://glance-internal:9292"},
		"regionOne"))).To(Equal(verdictOf{true, "", "", "internal http://glance-internal:9292, public https://glance.example.com in region regionOne"}))
	g.Expect(brief(endpointsVerdict(map[string]string{"public": "http://"}, "regionOne"))).To(Equal(verdictOf{false, "Requested",
		lc.SeverityInfo, `waiting for a host in the public endpoint "http://" (its operator sets it once its Route has one)`}))
	g.Expect(brief(endpointsVerdict(map[string]string{"private": "http://glance:9292"}, "regionOne"))).To(Equal(verdictOf{false,
		"InvalidInput", lc.SeverityError, `endpoint interface "private" is not public, internal or admin`}))
	g.Expect(brief(endpointsVerdict(nil, "regionOne"))).To(Equal(verdictOf{true, "", "", "no endpoints in region regionOne"}))
	g.Expect(brief(endpointsVerdict(map[string]string{"internal": "http://heat-api-internal:8004/v1/%(tenant_id)s"}, "regionOne"))).To(
		Equal(verdictOf{true, "", "", "internal http://heat-api-internal:8004/v1/%(tenant_id)s in region regionOne"}), "the URL as registered")
	g.Expect(brief(endpointsVerdict(map[string]string{"admin": "ftp://glance"}, "regionOne"))).To(Equal(verdictOf{true, "", "",
		`admin ftp://glance in region regionOne; the admin endpoint: not an http or https URL (scheme "ftp")`}))
}
