package identity_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/tests/support/fakekeystone"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
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

// TestKeepsConnectionsToKeystone: requests sent to one Keystone at once, as the
// registering workers send them, reuse the connections that earlier ones opened, over
// TLS: in rounds of 8 requests at once, the first round's connections serve every
// round after it (http.DefaultTransport keeps two idle connections for each host, so
// each round would open six more, and make both ends do six handshakes). A client
// given no transport, as the manager's, and a CA bundle.
func TestKeepsConnectionsToKeystone(t *testing.T) {
	g := NewWithT(t)
	keystone := fakekeystone.NewTLS("admin", "secret")
	defer keystone.Close()
	keystone.Slow(5 * time.Millisecond) // a round's requests overlap
	_, _, c := managerClient(t, keystone.URL, keystone.CAPEM())
	ctx := context.Background()
	const workers, rounds = 8, 10
	for r := 0; r < rounds; r++ {
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := c.GetUser(ctx, c.UserID()); err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			g.Expect(err).NotTo(HaveOccurred())
		}
		if r == 0 {
			g.Expect(keystone.Connections.Load()).To(BeNumerically(">=", 2), "the first round's requests did not overlap")
		}
	}
	// The authentication's and the first round's, and a few a dial racing a connection
	// coming back may add (net/http dials while a request waits for an idle one).
	g.Expect(keystone.Connections.Load()).To(BeNumerically("<=", 2*workers),
		"connections opened for %d rounds of %d requests at once", rounds, workers)
}

// TestAnswersKeepTheirConnection: an answer whose end comes after its JSON object (the
// newline Keystone ends its answers with, here sent a moment later, as a long answer's
// last part may come) is read to its end, and its connection serves the next request:
// an authentication and ten rounds of listings (read by the client) and a creation
// (read by gophercloud) one after the other use one connection; net/http does not reuse
// one closed before its answer's end.
func TestAnswersKeepTheirConnection(t *testing.T) {
	g := NewWithT(t)
	keystone := fakekeystone.New("admin", "secret")
	defer keystone.Close()
	var connections atomic.Int64
	front := fakekeystone.CountingConnections(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		answer := httptest.NewRecorder()
		keystone.Config.Handler.ServeHTTP(answer, r)
		for k, v := range answer.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(answer.Code)
		body := answer.Body.Bytes()
		_, _ = w.Write(bytes.TrimSuffix(body, []byte("\n")))
		if bytes.HasSuffix(body, []byte("\n")) {
			w.(http.Flusher).Flush()
			time.Sleep(20 * time.Millisecond)
			_, _ = w.Write([]byte("\n"))
		}
	}), &connections)
	front.Start()
	defer front.Close()
	_, _, c := managerClient(t, front.URL, nil)
	ctx := context.Background()
	for i := 0; i < 10; i++ {
		spec := identity.ServiceSpec{Type: fmt.Sprintf("type%d", i), Name: fmt.Sprintf("service%d", i), Enabled: true,
			Owner: "KeystoneService/ns/service/uid"}
		_, _, err := c.EnsureService(ctx, "", spec)
		g.Expect(err).NotTo(HaveOccurred())
		records, err := c.Records(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(records).To(HaveKey(identity.TypeRecord(spec.Type)))
	}
	g.Expect(connections.Load()).To(BeEquivalentTo(1), "connections opened for an authentication, 10 creations and 30 listings")
}

// TestForgetLeavesTheConnectionsInUse: a session forgotten while one of its requests
// runs goes on, on new connections: the connection that request gives back afterwards
// is not used again (each client has a pool of its own), as none of the forgotten
// session's is. A client given no transport, as the manager's.
func TestForgetLeavesTheConnectionsInUse(t *testing.T) {
	g := NewWithT(t)
	keystone := fakekeystone.New("admin", "secret")
	defer keystone.Close()
	clients, creds, old := managerClient(t, keystone.URL, nil)
	ctx := context.Background()
	g.Expect(keystone.Connections.Load()).To(BeEquivalentTo(1))

	reached, release := keystone.HoldNext(http.MethodGet, "/v3/users")
	done := make(chan error, 1)
	go func() {
		_, err := old.GetUser(ctx, old.UserID())
		done <- err
	}()
	<-reached
	clients.Forget(creds)
	release()
	g.Expect(<-done).NotTo(HaveOccurred())
	opened := keystone.Connections.Load()

	fresh, err := clients.Get(ctx, creds)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = fresh.GetUser(ctx, fresh.UserID())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(keystone.Connections.Load()).To(BeEquivalentTo(opened+1),
		"the new session opened a connection, and used none of the forgotten one's")
}

// managerClient is the admin's client of the fake Keystone at url, made as the manager
// makes it (Clients given no transport), verifying the server against caBundle when
// given; forgotten when the test ends.
func managerClient(t *testing.T, url string, caBundle []byte) (*identity.Clients, identity.Credentials, *identity.Client) {
	t.Helper()
	clients := &identity.Clients{}
	creds := identity.Credentials{URL: url, User: "admin", Password: "secret", Project: "admin", Domain: "Default", CABundle: caBundle}
	c, err := clients.Get(context.Background(), creds)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { clients.Forget(creds) })
	return clients, creds, c
}

// TestStalledTailCostsTheConnection: an answer whose reader gave up partway (a listing
// it could not read), from a server that then sends nothing more, is closed within a
// bounded wait for its tail instead of hanging the round until the request's timeout.
func TestStalledTailCostsTheConnection(t *testing.T) {
	g := NewWithT(t)
	release := make(chan struct{})
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"services": [{"id": "a"`))
		w.(http.Flusher).Flush()
		<-release
	}))
	defer server.Close()
	defer close(release)
	c := &http.Client{Transport: identity.ClientTransport(identity.NewTransport())}
	resp, err := c.Get(server.URL)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = resp.Body.Read(make([]byte, 8))
	g.Expect(err).NotTo(HaveOccurred())
	closed := make(chan error, 1)
	go func() { closed <- resp.Body.Close() }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("closing the answer waited 10 s for a tail the server never sends")
	}
}

// TestOneLoginAtATime: rounds that log in with one wrong password at once (the
// KeystoneAPI's check and the registrations' sessions, when its admin Secret changes)
// send Keystone one login, not one each: with lockout_failure_attempts at 2, two
// refusals would lock the admin out for everyone. Every round says the refusal.
func TestOneLoginAtATime(t *testing.T) {
	g := NewWithT(t)
	keystone, clients := adminLogins(t)
	keystone.Slow(50 * time.Millisecond) // the logins overlap
	wrong := adminWith(keystone, "hers", "uid/2#AdminPassword")
	const rounds = 8
	var wg sync.WaitGroup
	errs := make(chan error, rounds)
	for i := range rounds {
		wg.Go(func() {
			var err error
			if i%2 == 0 {
				_, err = clients.Get(context.Background(), wrong)
			} else {
				_, err = clients.Check(context.Background(), wrong)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		_, refused := identity.LoginRefused(err)
		g.Expect(refused).To(BeTrue(), "a round says the refusal: %v", err)
	}
	g.Expect(keystone.Requests()["POST /v3/auth"]).To(Equal(1), "logins Keystone refused")
}

// TestLoginAgainWaitsItsTurn: Keystone's admin password changed in Keystone, not yet in
// the Secret. A session whose token expired logs in again (gophercloud's reauth) while
// the KeystoneAPI's checks log in with the same old password: Keystone gets one login,
// and its refusal is recorded once, whichever of them sent it.
func TestLoginAgainWaitsItsTurn(t *testing.T) {
	g := NewWithT(t)
	keystone, clients := adminLogins(t)
	var records atomic.Int32
	clients.RecordRefusal = func(context.Context, identity.Credentials, string) { records.Add(1) }
	old := adminWith(keystone, "secret", "uid/1#AdminPassword")
	old.Holder = types.NamespacedName{Namespace: "tenant", Name: "keystone"}
	session, err := clients.Get(context.Background(), old)
	g.Expect(err).NotTo(HaveOccurred())
	userID := session.UserID()
	keystone.SetPassword("admin", "rotated")
	keystone.ExpireTokens()
	keystone.Slow(50 * time.Millisecond)
	before := keystone.Requests()["POST /v3/auth"]
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Go(func() {
			if i%2 == 0 {
				_, _ = session.GetUser(context.Background(), userID)
			} else {
				_, _ = clients.Check(context.Background(), old)
			}
		})
	}
	wg.Wait()
	g.Expect(keystone.Requests()["POST /v3/auth"]-before).To(Equal(1), "logins Keystone refused")
	g.Expect(records.Load()).To(BeEquivalentTo(1), "refusals recorded")
}

// TestWaitForALoginEndsWithItsContext: a login waiting for another of the same user
// gives up when its context ends, sending nothing: the KeystoneAPI's check keeps its
// bound behind a registration's slow login.
func TestWaitForALoginEndsWithItsContext(t *testing.T) {
	g := NewWithT(t)
	keystone, clients := adminLogins(t)
	wrong := adminWith(keystone, "hers", "uid/2#AdminPassword")
	reached, release := keystone.HoldNext(http.MethodPost, "/v3/auth")
	defer release()
	first := make(chan error, 1)
	go func() {
		_, err := clients.Get(context.Background(), wrong)
		first <- err
	}()
	<-reached
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := clients.Check(ctx, wrong)
	g.Expect(err).To(MatchError(context.DeadlineExceeded))
	g.Expect(err).To(MatchError(ContainSubstring("waiting for another login of user admin")))
	release()
	_, refused := identity.LoginRefused(<-first)
	g.Expect(refused).To(BeTrue(), "the held login is refused")
	g.Expect(keystone.Requests()["POST /v3/auth"]).To(Equal(1), "logins sent")
}

// adminLogins is a fake Keystone (admin, password secret), closed when t ends, and a
// Clients of its own transport, as the logins tests use them.
func adminLogins(t *testing.T) (*fakekeystone.Server, *identity.Clients) {
	keystone := fakekeystone.New("admin", "secret")
	t.Cleanup(keystone.Close)
	return keystone, &identity.Clients{Transport: &http.Transport{}}
}

// adminWith are the admin's credentials at keystone with password read from source.
func adminWith(keystone *fakekeystone.Server, password, source string) identity.Credentials {
	return identity.Credentials{URL: keystone.URL, User: "admin", Password: password, Project: "admin", Domain: "Default",
		Source: source}
}

// TestRefusalRecordedForARestart (docs/security.md, the admin password Secret): a refused
// login of credentials naming a Holder is handed to RecordRefusal once, with its
// RefusalRecord; a restarted operator (new Clients, no memory) given that record sends
// no login, by Get or Check, and says the refusal as Keystone's 401; another source of
// the password is tried, and once it works the record is removed.
func TestRefusalRecordedForARestart(t *testing.T) {
	g := NewWithT(t)
	keystone, clients := adminLogins(t)
	holder := types.NamespacedName{Namespace: "tenant", Name: "keystone"}
	var records []string
	clients.RecordRefusal = func(_ context.Context, creds identity.Credentials, record string) {
		g.Expect(creds.Holder).To(Equal(holder))
		records = append(records, record)
	}
	wrong := adminWith(keystone, "hers", "uid/2#AdminPassword")
	wrong.Holder = holder
	for range 3 {
		_, err := clients.Get(context.Background(), wrong)
		_, refused := identity.LoginRefused(err)
		g.Expect(refused).To(BeTrue(), "refused: %v", err)
	}
	g.Expect(keystone.Requests()["POST /v3/auth"]).To(Equal(1))
	g.Expect(records).To(Equal([]string{identity.RefusalRecord(wrong)}), "recorded once")

	restarted := &identity.Clients{Transport: &http.Transport{}, RecordRefusal: clients.RecordRefusal}
	wrong.Recorded = records[0]
	_, err := restarted.Get(context.Background(), wrong)
	g.Expect(err).To(MatchError(ContainSubstring("(at an earlier login, recorded on tenant/keystone)")))
	g.Expect(identity.StatusCode(err)).To(Equal(http.StatusUnauthorized), "a refusal, not a failure that may pass")
	g.Expect(identity.Transient(err)).To(BeFalse())
	_, err = restarted.Check(context.Background(), wrong)
	_, refused := identity.LoginRefused(err)
	g.Expect(refused).To(BeTrue(), "the KeystoneAPI's check reads the record too: %v", err)
	g.Expect(keystone.Requests()["POST /v3/auth"]).To(Equal(1), "no login after the restart")

	fixed := adminWith(keystone, "secret", "uid/3#AdminPassword")
	fixed.Holder, fixed.Recorded = holder, records[0]
	_, err = restarted.Get(context.Background(), fixed)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(keystone.Requests()["POST /v3/auth"]).To(Equal(2), "a new version of the Secret is tried")
	g.Expect(records).To(Equal([]string{identity.RefusalRecord(wrong), ""}), "the record removed once a login works")

	unknown := adminWith(keystone, "hers", "")
	g.Expect(identity.RefusalRecord(unknown)).To(BeEmpty(), "a password of unknown source is never taken for a recorded one")
}
