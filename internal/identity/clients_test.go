package identity_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/tests/support/fakekeystone"
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

// TestFollowsAUserCreatedAgain: a service user deleted and created again under the same
// name and password has a new ID. Keystone revokes the old user's tokens, the client
// authenticates again (as the new user), and the request naming the old ID gets a 403:
// that answer is stale, not final, and the client's UserID is the new one from then on.
func TestFollowsAUserCreatedAgain(t *testing.T) {
	g := NewWithT(t)
	keystone := fakekeystone.New("admin", "secret")
	defer keystone.Close()
	user := map[string]any{"name": "glance", "domain_id": "default", "password": "glance-pw", "enabled": true}
	oldID := keystone.Create(fakekeystone.Users, user)
	clients := &identity.Clients{Transport: &http.Transport{}}
	ctx := context.Background()
	c, err := clients.Get(ctx, identity.Credentials{URL: keystone.URL, User: "glance", Password: "glance-pw", Project: "admin", Domain: "Default"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.UserID()).To(Equal(oldID))

	keystone.Delete(fakekeystone.Users, oldID)
	newID := keystone.Create(fakekeystone.Users, map[string]any{"name": "glance", "domain_id": "default", "password": "glance-pw", "enabled": true})
	_, err = c.OwnedAppCreds(ctx, oldID, "KeystoneApplicationCredential/ns/ac/uid")
	g.Expect(identity.StatusCode(err)).To(Equal(http.StatusForbidden))
	g.Expect(identity.Stale(err)).To(BeTrue(), "retried with the new ID, not final: %v", err)
	g.Expect(c.UserID()).To(Equal(newID))
	_, err = c.OwnedAppCreds(ctx, c.UserID(), "KeystoneApplicationCredential/ns/ac/uid")
	g.Expect(err).NotTo(HaveOccurred())

	admin, err := clients.Get(ctx, identity.Credentials{URL: keystone.URL, User: "admin", Password: "secret", Project: "admin", Domain: "Default"})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = admin.OwnedAppCreds(ctx, newID, "KeystoneApplicationCredential/ns/ac/uid")
	g.Expect(err).NotTo(HaveOccurred(), "the admin reads any user's")
}

// TestDropsIdleClients: a client nobody asked for during IdleTimeout (old credentials
// after a password rotation, a deleted namespace's) is dropped with its password; one
// in use stays.
func TestDropsIdleClients(t *testing.T) {
	g := NewWithT(t)
	keystone := fakekeystone.New("admin", "secret")
	defer keystone.Close()
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	clients := &identity.Clients{Transport: &http.Transport{}, IdleTimeout: time.Hour, Now: func() time.Time { return now }}
	ctx := context.Background()
	old := identity.Credentials{URL: keystone.URL, User: "admin", Password: "secret", Project: "admin", Domain: "Default"}
	_, err := clients.Get(ctx, old)
	g.Expect(err).NotTo(HaveOccurred())
	keystone.SetPassword("admin", "rotated")
	current := old
	current.Password = "rotated"
	for range 7 {
		now = now.Add(10 * time.Minute)
		_, err = clients.Get(ctx, current)
		g.Expect(err).NotTo(HaveOccurred())
	}
	g.Expect(clients.Len()).To(Equal(1), "the client of the old password went after an hour unused")
	c, err := clients.Get(ctx, current)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.UserID()).NotTo(BeEmpty())
}
