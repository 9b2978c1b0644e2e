package identity

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func answer(code int, body string) error {
	return fmt.Errorf("creating service: %w", gophercloud.ErrUnexpectedResponseCode{Actual: code, Body: []byte(body)})
}

func TestClassification(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		code      int
		transient bool
		message   string
	}{
		{"no answer", errors.New("dial tcp 127.0.0.1:5000: connection refused"), 0, true, "dial tcp 127.0.0.1:5000: connection refused"},
		{"5xx", answer(503, `{"error": {"message": "Service Unavailable"}}`), 503, true, "Service Unavailable: Service Unavailable"},
		{"429", answer(429, ""), 429, true, "Too Many Requests"},
		{"403", answer(403, `{"error": {"code": 403, "message": "You are not authorized"}}`), 403, false, "Forbidden: You are not authorized"},
		{"400 with no JSON", answer(400, "bad"), 400, false, "Bad Request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(StatusCode(tt.err)).To(Equal(tt.code))
			g.Expect(Transient(tt.err)).To(Equal(tt.transient))
			g.Expect(Message(tt.err)).To(Equal(tt.message))
		})
	}
	g := NewWithT(t)
	g.Expect(conflict(answer(http.StatusConflict, ""))).To(BeTrue())
	g.Expect(notFound(answer(http.StatusNotFound, ""))).To(BeTrue())
}

func TestRefusedIsNoSessionSuspect(t *testing.T) {
	g := NewWithT(t)
	notFound := gophercloud.ErrUnexpectedResponseCode{Actual: http.StatusNotFound, Body: []byte(`{"error":{"message":"Role x is not defined"}}`)}
	g.Expect(SessionSuspect(notFound)).To(BeTrue(), "a 404 that escaped the registration code")
	refused := fmt.Errorf("creating: %w", &RefusedError{Err: notFound})
	g.Expect(SessionSuspect(refused)).To(BeFalse())
	g.Expect(Transient(refused)).To(BeFalse())
	g.Expect(Message(refused)).To(Equal("Not Found: Role x is not defined"))
}

// TestUnreachable: only what says Keystone could not be asked counts, never an error of
// the Kubernetes API or of another host.
func TestUnreachable(t *testing.T) {
	const keystone = "https://keystone-internal.openstack.svc:5000"
	netErr := func(u string) error {
		return fmt.Errorf("deleting service 1: %w", &url.Error{Op: "Delete", URL: u, Err: errors.New("connection refused")})
	}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"no answer from Keystone's host", netErr(keystone + "/v3/services/1"), true},
		{"no answer from the Kubernetes API", netErr("https://10.96.0.1:443/api/v1/namespaces/openstack/secrets"), false},
		{"a Kubernetes API refusal", apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "osp-secret", errors.New("no")), false},
		{"an error of the operator's own", errors.New("listing the KeystoneEndpoints: timeout"), false},
		{"5xx", answer(503, ""), true},
		{"429", answer(429, ""), true},
		{"401: the credentials", answer(401, ""), true},
		{"403: the credentials", answer(403, ""), true},
		{"409: the request itself", answer(409, ""), false},
		{"a 404 to a list: a suspect session", answer(404, ""), true},
		{"the admin's password gone", &CredentialsGoneError{What: "admin secret osp-secret not found"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(Unreachable(tt.err, keystone)).To(Equal(tt.want))
		})
	}
	NewWithT(t).Expect(Unreachable(netErr("https://anything/v3"), "")).To(BeTrue(), "Keystone's URL unknown: any host")
}
