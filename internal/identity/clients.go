package identity

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
	"k8s.io/apimachinery/pkg/types"
)

// Credentials identify an admin of one Keystone.
type Credentials struct {
	// URL is Keystone's base URL (without /v3).
	URL      string
	User     string
	Password string
	Project  string
	// Domain of the user and project.
	Domain string
	// CABundle, PEM, replaces the system's roots to verify Keystone's certificate.
	CABundle []byte
	// Source says where Password was read ("<secret uid>/<resourceVersion>#<key>"; ""
	// when not known): a login Keystone refused is not tried again until it changes
	// (Clients.Get).
	Source string
	// Holder is the object a refusal of this login is recorded on, so that it outlives
	// the operator's process (the KeystoneAPI whose admin this is; empty: none):
	// Clients.RecordRefusal is told of each refusal, and of a login that works again.
	Holder types.NamespacedName
	// Recorded is the refusal the caller found recorded on Holder (a RefusalRecord): a
	// login whose RefusalRecord it is is not sent, as one Keystone refused.
	Recorded string
}

// RefusalRecord names the login of creds, for Credentials.Recorded: who logs in where
// and the source of the password (Source), a digest without the password. "" when
// the source is not known: such a login is never taken for a recorded one.
func RefusalRecord(creds Credentials) string {
	if creds.Source == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(userKey(creds) + "\x00" + creds.Source))
	return hex.EncodeToString(sum[:12])
}

func (c Credentials) key() string {
	sum := sha256.Sum256([]byte(c.Password))
	ca := sha256.Sum256(c.CABundle)
	return strings.Join([]string{c.URL, c.User, c.Project, c.Domain, string(sum[:]), string(ca[:])}, "\x00")
}

// Fingerprint identifies the credentials (a digest: no password in it), to tell when
// they changed.
func (c Credentials) Fingerprint() string {
	sum := sha256.Sum256([]byte(c.key()))
	return hex.EncodeToString(sum[:])
}

// NewTransport is http.DefaultTransport's settings, but for the idle connections it
// keeps to each Keystone: as many as it keeps in all (the default keeps two), for
// keepAlive. The registering workers send several requests to one Keystone at once;
// with two kept, most of their requests would open a connection of their own, and, over
// TLS, make both ends do a handshake.
func NewTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = t.MaxIdleConns
	t.IdleConnTimeout = keepAlive
	return t
}

// keepAlive is how long an idle connection to Keystone is kept: less than the 5 s after
// which Apache (KeepAliveTimeout's default, which Keystone's httpd.conf keeps) closes
// it, so that a request is never written onto a connection the server is closing (a
// POST is not sent again on another).
const keepAlive = 4 * time.Second

// TransportFor returns a transport with a pool of connections of its own: a clone of
// base (NewTransport's when nil) that verifies servers against caBundle instead of the
// system's roots when caBundle is not empty. A base that is not an *http.Transport is
// returned as it is, and cannot take a CA bundle. Verification is never turned off.
func TransportFor(base http.RoundTripper, caBundle []byte) (http.RoundTripper, error) {
	if base == nil {
		base = NewTransport()
	}
	t, ok := base.(*http.Transport)
	switch {
	case !ok && len(caBundle) == 0:
		return base, nil
	case !ok:
		return nil, fmt.Errorf("a CA bundle cannot be added to a %T", base)
	}
	t = t.Clone()
	if len(caBundle) == 0 {
		return t, nil
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caBundle) {
		return nil, errors.New("the CA bundle holds no PEM certificate")
	}
	if t.TLSClientConfig == nil {
		t.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	t.TLSClientConfig.RootCAs = pool
	return t, nil
}

// clientTransport carries a client's requests through its pool of connections (its
// RoundTripper). A write that may change a service's or a user's record spoils the
// identity.Seen of the request's context (spoilOn). Each answer's body is read to its
// end (up to answerTail bytes more) before it is closed: net/http reuses a connection
// only for an answer read to its end, and a JSON decoder stops at the object's close,
// before the newline Keystone ends its answers with, or a long answer's last chunk.
type clientTransport struct{ http.RoundTripper }

// answerTail bounds what clientTransport reads after its reader stopped: more is not the
// tail of an answer already understood, and the connection is better closed.
const answerTail = 4 << 10

// tailWait bounds how long Close waits for that tail: it comes with the answer, and a
// server that stalls after a part its reader gave up on (a listing it could not read)
// costs the connection, not the round's time.
const tailWait = time.Second

func (t clientTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	spoilOn(req)
	resp, err := t.RoundTripper.RoundTrip(req)
	if resp != nil && resp.Body != nil {
		resp.Body = tailReadingBody{resp.Body}
	}
	return resp, err
}

// CloseIdleConnections closes the idle connections of the RoundTripper (Forget).
func (t clientTransport) CloseIdleConnections() {
	if c, ok := t.RoundTripper.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// tailReadingBody is an answer's body that Close reads to its end first.
type tailReadingBody struct{ io.ReadCloser }

func (b tailReadingBody) Close() error {
	stalled := time.AfterFunc(tailWait, func() { _ = b.ReadCloser.Close() }) // ends the read below
	_, _ = io.Copy(io.Discard, io.LimitReader(b.ReadCloser, answerTail))
	stalled.Stop()
	return b.ReadCloser.Close()
}

// DefaultIdleTimeout is how long a client nobody asked for is kept: Keystone's tokens
// live an hour by default, so a client idle that long would authenticate again anyway.
const DefaultIdleTimeout = time.Hour

// Clients shares one authenticated client per Keystone and admin, so that a token is
// reused until it expires (gophercloud re-authenticates on 401) instead of one
// authentication per reconcile. A client nobody asked for during IdleTimeout is
// dropped, with the password it holds: after a password rotation, a CA change or a
// namespace's deletion, nothing of the old credentials stays.
type Clients struct {
	// Timeout bounds each request to Keystone.
	Timeout time.Duration
	// Transport carries the requests: each client has a clone of it (TransportFor), or
	// of NewTransport's when nil.
	Transport http.RoundTripper
	// IdleTimeout: DefaultIdleTimeout when 0.
	IdleTimeout time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// ClaimUnclustered lets its clients claim a predecessor's mark of an earlier version,
	// which names no cluster (classify): set when no two clusters shared a Keystone
	// before the upgrade (--claim-unclustered-marks).
	ClaimUnclustered bool
	// RecordRefusal, when set, is told of a login Keystone refused (record, the login's
	// RefusalRecord) whose credentials name a Holder, and of one that works where a
	// refusal was recorded (record ""): it records that on the Holder, so that a
	// restarted operator does not send the refused login again. It is called before the
	// next login of that user starts.
	RecordRefusal func(ctx context.Context, creds Credentials, record string)

	mu        sync.Mutex
	clients   map[string]*Client
	lastSweep time.Time
	// logins remembers the logins Keystone refused (passwords.go).
	logins refusedLogins
}

// Get returns the client of creds, authenticating the first time. A login Keystone
// refused is not tried again with the same password from the same source (a
// LoginRefusedError, remembered): every refusal counts towards Keystone's lockout.
func (cs *Clients) Get(ctx context.Context, creds Credentials) (*Client, error) {
	key := creds.key()
	if refused := cs.logins.refused(creds); refused != nil {
		return nil, refused
	}
	cs.hooks()
	cs.mu.Lock()
	now := cs.now()
	cs.sweepLocked(now)
	c, ok := cs.clients[key]
	if !ok {
		if cs.clients == nil {
			cs.clients = map[string]*Client{}
		}
		c = &Client{claimUnclustered: cs.ClaimUnclustered}
		cs.clients[key] = c
	}
	c.lastUsed = now
	cs.mu.Unlock()
	fresh, err := c.authenticate(ctx, creds, cs.Timeout, cs.Transport, &cs.logins)
	if err != nil {
		if refused, ok := LoginRefused(err); ok {
			cs.Forget(creds)
			return nil, refused
		}
		return c, err
	}
	if fresh {
		cs.worked(ctx, creds)
	}
	return c, nil
}

// hooks gives the memory of refused logins what it tells: Forget, of a session a
// refused login again ended, and RecordRefusal.
func (cs *Clients) hooks() {
	cs.logins.mu.Lock()
	defer cs.logins.mu.Unlock()
	cs.logins.drop, cs.logins.record = cs.Forget, cs.RecordRefusal
}

// worked forgets the refusals of creds' password, which Keystone took now, and the
// refusal recorded on their Holder.
func (cs *Clients) worked(ctx context.Context, creds Credentials) {
	cs.logins.clear(creds)
	if creds.Recorded != "" && creds.Holder.Name != "" && cs.RecordRefusal != nil {
		cs.RecordRefusal(ctx, creds, "")
	}
}

// Check logs in with creds afresh, on a client of its own that is not kept (an admin's
// credentials checked as they are now, not a session opened earlier), through the same
// memory of refused logins as Get: a password Keystone refused is not tried again.
func (cs *Clients) Check(ctx context.Context, creds Credentials) (*Client, error) {
	if refused := cs.logins.refused(creds); refused != nil {
		return nil, refused
	}
	cs.hooks()
	c := &Client{claimUnclustered: cs.ClaimUnclustered}
	if _, err := c.authenticate(ctx, creds, cs.Timeout, cs.Transport, &cs.logins); err != nil {
		if refused, ok := LoginRefused(err); ok {
			return nil, refused
		}
		return nil, err
	}
	cs.worked(ctx, creds)
	return c, nil
}

// Authenticated tells whether a client of creds holds a session: Get then sends no
// password to Keystone.
func (cs *Clients) Authenticated(creds Credentials) bool {
	cs.mu.Lock()
	c := cs.clients[creds.key()]
	cs.mu.Unlock()
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sc != nil
}

// Len is how many clients are kept.
func (cs *Clients) Len() int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return len(cs.clients)
}

func (cs *Clients) now() time.Time {
	if cs.Now != nil {
		return cs.Now()
	}
	return time.Now()
}

// sweepLocked drops the clients idle for IdleTimeout, at most once a tenth of it.
// cs.mu is held.
func (cs *Clients) sweepLocked(now time.Time) {
	idle := cs.IdleTimeout
	if idle <= 0 {
		idle = DefaultIdleTimeout
	}
	if now.Sub(cs.lastSweep) < idle/10 {
		return
	}
	cs.lastSweep = now
	for key, c := range cs.clients {
		if now.Sub(c.lastUsed) >= idle {
			delete(cs.clients, key)
			go c.closeIdleConnections()
		}
	}
}

// Forget drops the client of creds: the next Get authenticates again, on new
// connections (each client has a pool of its own, TransportFor). The dropped pool's idle
// connections are closed; one that a request still running gives back afterwards stays
// in it, used only by the rounds that still hold the dropped client, and closed after
// keepAlive. For a session Keystone answers in ways it cannot answer a valid one (see
// SessionSuspect).
func (cs *Clients) Forget(creds Credentials) {
	cs.mu.Lock()
	c := cs.clients[creds.key()]
	delete(cs.clients, creds.key())
	cs.mu.Unlock()
	if c != nil {
		c.closeIdleConnections()
	}
}

// Client is an authenticated client of one Keystone, for one user (an admin, or a
// service user creating its own application credentials).
type Client struct {
	// lastUsed is when Clients.Get last returned it (Clients.mu guards it).
	lastUsed time.Time

	// claimUnclustered is Clients.ClaimUnclustered.
	claimUnclustered bool

	mu sync.Mutex
	sc *gophercloud.ServiceClient
	// http carries its requests, from the first authentication on, through transport,
	// the client's own pool of connections (TransportFor), made at the first attempt.
	http      *http.Client
	transport http.RoundTripper
	// userID is the authenticated user's ID, read from the token userToken; formerIDs
	// are the IDs it had before (a user deleted and created again).
	userID, userToken string
	formerIDs         map[string]bool

	// projectIDs caches project IDs by domain and name, roleIDs role IDs by name: every
	// service of one Keystone shares them, so they are looked up once per Keystone
	// (projects and roles are not renamed). A request that finds one stale (404) drops
	// them (ForgetIDs) and the next lookup reads them again.
	projectIDs sync.Map
	roleIDs    sync.Map
	// refused holds, by user ID and owner, the last password check Keystone refused
	// (checkDigest): not made again (checkPassword).
	refused sync.Map
	// registered holds, by service ID and owner, the services EnsureService found the
	// owner's namespace registered (Owned, Joined), which nothing a namespace writes can
	// make another's: ServiceOwnership need not read them again.
	registered sync.Map
	// locators remember what lists a service or user, by kind and ID (fresh.go).
	locators sync.Map
}

// ForgetIDs drops the cached project and role IDs: one of them turned out stale.
func (c *Client) ForgetIDs() {
	c.projectIDs.Clear()
	c.roleIDs.Clear()
}

// authenticate logs the client in with creds unless it holds a session; fresh tells
// that it logged in now.
func (c *Client) authenticate(ctx context.Context, creds Credentials, timeout time.Duration, transport http.RoundTripper,
	logins *refusedLogins) (fresh bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sc != nil {
		return false, nil
	}
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	endpoint := strings.TrimRight(creds.URL, "/") + "/v3/"
	provider, err := openstack.NewClient(endpoint)
	if err != nil {
		return false, fmt.Errorf("keystone client for %s: %w", creds.URL, err)
	}
	if c.transport == nil {
		if c.transport, err = TransportFor(transport, creds.CABundle); err != nil {
			return false, fmt.Errorf("keystone client for %s: %w", creds.URL, err)
		}
	}
	provider.HTTPClient = http.Client{Timeout: timeout, Transport: clientTransport{c.transport}}
	c.http = &provider.HTTPClient
	opts := gophercloud.AuthOptions{
		IdentityEndpoint: endpoint, Username: creds.User, Password: creds.Password, DomainName: creds.Domain,
		Scope:       &gophercloud.AuthScope{ProjectName: creds.Project, DomainName: creds.Domain},
		AllowReauth: true,
	}
	// One login of a user at a time, a refusal remembered before the next (attempt).
	if err := logins.attempt(ctx, creds, func() error { return openstack.Authenticate(ctx, provider, opts) }); err != nil {
		if refused, ok := LoginRefused(err); ok {
			return false, refused
		}
		return false, fmt.Errorf("authenticating as %s at %s: %w", creds.User, creds.URL, err)
	}
	// gophercloud logs in again when the token is refused (expired): with a password
	// Keystone refused once, never again (refusedLogins).
	provider.ReauthFunc = logins.guard(creds, provider.ReauthFunc)
	c.sc = &gophercloud.ServiceClient{ProviderClient: provider, Endpoint: endpoint, Type: "identity"}
	c.refreshUserLocked()
	return true, nil
}

// refreshUserLocked reads the user's ID from the current token when the token changed
// since: gophercloud authenticates again on a 401, and a user deleted and created again
// under the same name and password has another ID. c.mu is held.
func (c *Client) refreshUserLocked() {
	token := c.sc.Token()
	if token == c.userToken {
		return
	}
	if result, ok := c.sc.GetAuthResult().(tokens.CreateResult); ok {
		if user, err := result.ExtractUser(); err == nil {
			if c.userID != "" && c.userID != user.ID {
				if c.formerIDs == nil {
					c.formerIDs = map[string]bool{}
				}
				c.formerIDs[c.userID] = true
			}
			c.userID, c.userToken = user.ID, token
		}
	}
}

// closeIdleConnections closes the idle connections of the client's transport, so that
// its next requests open new ones.
func (c *Client) closeIdleConnections() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.http != nil {
		c.http.CloseIdleConnections()
	}
}

// UserID is the ID of the user the client's current token is for; "" when Keystone's
// answer did not say.
func (c *Client) UserID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sc != nil {
		c.refreshUserLocked()
	}
	return c.userID
}

// staleUser marks a 403 to a request for userID as stale when userID was the client's
// own user and its token is now another's (authenticated again after the user was
// created anew): the next round asks with the new ID.
func (c *Client) staleUser(err error, userID string) error {
	if StatusCode(err) != http.StatusForbidden {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sc != nil {
		c.refreshUserLocked()
	}
	if userID != c.userID && c.formerIDs[userID] {
		return &StaleError{Err: err}
	}
	return err
}
