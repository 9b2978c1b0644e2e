package identity

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	. "github.com/onsi/gomega"
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
