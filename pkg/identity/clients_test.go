package identity_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/keystone-stepwise/keystone-operator/internal/fakekeystone"
	"github.com/keystone-stepwise/keystone-operator/pkg/identity"
	. "github.com/onsi/gomega"
)

// TestForgetOpensNewConnections: a connection on which every request gets a 404 with
// an empty body (as the operator's pooled connections did in make e2e after Keystone
// was scaled to zero and back) is not used again once the session is forgotten.
func TestForgetOpensNewConnections(t *testing.T) {
	g := NewWithT(t)
	keystone := fakekeystone.New("admin", "secret")
	defer keystone.Close()
	var mu sync.Mutex
	bad := "" // the client address of the first connection
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if bad == "" {
			bad = r.RemoteAddr
		}
		broken := r.RemoteAddr == bad
		mu.Unlock()
		if broken {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		keystone.Config.Handler.ServeHTTP(w, r)
	}))
	defer front.Close()

	// A transport of its own, so that no other test's connections are closed.
	clients := &identity.Clients{Transport: &http.Transport{}}
	creds := identity.Credentials{URL: front.URL, User: "admin", Password: "secret", Project: "admin", Domain: "Default"}
	ctx := context.Background()
	_, err := clients.Get(ctx, creds)
	g.Expect(err).To(HaveOccurred())
	g.Expect(identity.SessionSuspect(err)).To(BeTrue(), "a 404 to an authentication: %v", err)

	// Authenticating again without forgetting reuses the broken connection.
	_, err = clients.Get(ctx, creds)
	g.Expect(identity.SessionSuspect(err)).To(BeTrue(), "the second attempt went to a new connection: %v", err)

	clients.Forget(creds)
	c, err := clients.Get(ctx, creds)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.UserID()).NotTo(BeEmpty())
}
