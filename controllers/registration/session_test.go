package registration

import (
	"errors"
	"net/http"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/internal/reasons"
	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
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
