package registration

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/internal/reasons"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestKeystoneVerdict(t *testing.T) {
	answer := func(code int, body string) error {
		return gophercloud.ErrUnexpectedResponseCode{Actual: code, Body: []byte(body)}
	}
	failed := reasons.Of(keystonev1.ServiceFailedReason)
	tests := []struct {
		name     string
		err      error
		reason   lc.Reason
		severity lc.Severity
		message  string
		suspect  bool
	}{
		{"no answer", errors.New("dial tcp 10.0.0.1:5000: connection refused"), "ServiceUnavailable", lc.SeverityWarning,
			"Keystone at https://keystone: dial tcp 10.0.0.1:5000: connection refused", false},
		{"an answer that may change", answer(http.StatusServiceUnavailable, ""), "ServiceUnavailable", lc.SeverityWarning,
			"Keystone at https://keystone: Service Unavailable", false},
		{"too many requests", answer(http.StatusTooManyRequests, ""), "ServiceUnavailable", lc.SeverityWarning,
			"Keystone at https://keystone: Too Many Requests", false},
		{"a cached ID deleted since", &identity.StaleError{Err: answer(http.StatusNotFound, "")}, "ServiceUnavailable", lc.SeverityWarning,
			"Keystone at https://keystone: Not Found", false},
		{"a 404 no valid session gets", answer(http.StatusNotFound, ""), "ServiceUnavailable", lc.SeverityWarning,
			"Keystone at https://keystone: Not Found to a request that cannot get one; authenticating again", true},
		{"a 404 that refuses the request itself", &identity.RefusedError{Err: answer(http.StatusNotFound,
			`{"error": {"message": "Could not find role: reader."}}`)}, "ServiceFailed", lc.SeverityError,
			"Keystone at https://keystone refused: Not Found: Could not find role: reader.", false},
		{"a refusal", answer(http.StatusBadRequest, `{"error": {"message": "Invalid input for field 'type'."}}`), "ServiceFailed", lc.SeverityError,
			"Keystone at https://keystone refused: Bad Request: Invalid input for field 'type'.", false},
		{"forbidden", answer(http.StatusForbidden, ""), "ServiceFailed", lc.SeverityError,
			"Keystone at https://keystone refused: Forbidden", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			v, suspect := keystoneVerdict("https://keystone", failed, tt.err)
			g.Expect(v.True).To(BeFalse())
			g.Expect(v.Reason.Name).To(Equal(tt.reason))
			g.Expect(v.Reason.Severity).To(Equal(tt.severity))
			g.Expect(v.Message).To(Equal(tt.message))
			g.Expect(suspect).To(Equal(tt.suspect))
		})
	}
}

func TestMarkKeystoneAPI(t *testing.T) {
	const step lc.Type = "KeystoneAPIReady"
	api := func(generation, observed int64, ready lc.Condition, internal string, deleting bool) *keystonev1.KeystoneAPI {
		a := &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Generation: generation}}
		a.Status.ObservedGeneration = observed
		a.Status.Conditions = lc.Conditions{ready}
		if internal != "" {
			a.Status.APIEndpoints = map[string]string{keystonev1.EndpointInternal: internal}
		}
		if deleting {
			a.DeletionTimestamp = &metav1.Time{Time: time.Now()}
		}
		return a
	}
	ready := lc.Condition{Type: lc.ReadyCondition, Status: corev1.ConditionTrue, Reason: lc.ReadyReason}
	progressing := lc.Condition{Type: lc.ReadyCondition, Status: corev1.ConditionFalse, Reason: "Created",
		Severity: lc.SeverityInfo, Message: "DBSyncReady (7/13 ready): job keystone-db-sync running"}
	failing := lc.Condition{Type: lc.ReadyCondition, Status: corev1.ConditionFalse, Reason: "CreationFailed",
		Severity: lc.SeverityError, Message: "DBSyncReady (7/13 ready): job keystone-db-sync failed after 4 attempts"}
	url := "https://keystone-internal.openstack.svc:5000"
	tests := []struct {
		name   string
		api    *keystonev1.KeystoneAPI
		usable bool
		want   lc.Condition
	}{
		{"none in the namespace", nil, false, lc.Condition{Status: corev1.ConditionFalse, Reason: "DependencyNotFound",
			Severity: lc.SeverityWarning, Message: "no KeystoneAPI in namespace openstack"}},
		{"being deleted", api(1, 1, ready, url, true), false, lc.Condition{Status: corev1.ConditionFalse, Reason: "DependencyNotFound",
			Severity: lc.SeverityWarning, Message: "KeystoneAPI keystone is being deleted"}},
		{"progressing: its progress, not its messages", api(1, 1, progressing, url, false), false, lc.Condition{Status: corev1.ConditionFalse,
			Reason: "Created", Severity: lc.SeverityInfo, Message: "KeystoneAPI keystone is not ready yet"}},
		{"failing: its message", api(1, 1, failing, url, false), false, lc.Condition{Status: corev1.ConditionFalse, Reason: "CreationFailed",
			Severity: lc.SeverityError, Message: "KeystoneAPI keystone: DBSyncReady (7/13 ready): job keystone-db-sync failed after 4 attempts"}},
		{"ready for an older generation", api(2, 1, ready, url, false), false, lc.Condition{Status: corev1.ConditionFalse, Reason: "Requested",
			Severity: lc.SeverityInfo, Message: "KeystoneAPI keystone: waiting for its current generation to be ready"}},
		{"ready without an internal endpoint", api(1, 1, ready, "", false), false, lc.Condition{Status: corev1.ConditionFalse,
			Reason: "Requested", Severity: lc.SeverityInfo, Message: "KeystoneAPI keystone: waiting for its current generation to be ready"}},
		{"ready", api(1, 1, ready, url, false), true, lc.Condition{Status: corev1.ConditionTrue, Reason: lc.ReadyReason,
			Message: "KeystoneAPI keystone is ready"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			round := condition.Steps{step}.Begin(nil, time.Now())
			g.Expect(MarkKeystoneAPI(round, step, "openstack", tt.api)).To(Equal(tt.usable))
			got := round.Get(step)
			g.Expect(lc.Condition{Status: got.Status, Reason: got.Reason, Severity: got.Severity, Message: got.Message}).To(Equal(tt.want))
		})
	}
}
