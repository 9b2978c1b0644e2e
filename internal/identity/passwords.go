package identity

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
)

// checkPassword returns a Shared or Adopted user u once want's password is its password:
// the same source as the one it was set from, or else a password Keystone takes. A
// password Keystone refuses is a PasswordConflictError: the user's owner sets it, or,
// for a user that existed before (adopted), whoever made it; never this one.
func (c *Client) checkPassword(ctx context.Context, u *User, want UserSpec, ownership Ownership) (Registered, bool, error) {
	reg := Registered{ID: u.ID, Ownership: ownership, Keeper: u.Owner}
	conflict := &PasswordConflictError{User: want.Name, Owner: u.Owner, Region: ownership == Joined}
	if u.PasswordFrom == want.PasswordFrom {
		return reg, false, nil
	}
	// A password Keystone refused is not tried again until the Secret's version (in
	// want.PasswordFrom), the password the user has (its recorded source) or want.Retry
	// changes: every refusal counts towards Keystone's lockout ([security_compliance]
	// lockout_failure_attempts), which would lock the user out for everyone using it.
	// The last refused check is remembered per owner, here and by the owner itself
	// (want.Refused, which outlives this process): two owners using the user with two
	// Secrets do not take turns forgetting each other's refusal, and any change from the
	// refused check, back to an earlier state included, is tried once.
	conflict.Tried = checkDigest(u.ID, want.PasswordFrom, u.PasswordFrom, want.Retry)
	mine := u.ID + "\x00" + want.Owner
	if last, ok := c.refused.Load(mine); (ok && last == conflict.Tried) || want.Refused == conflict.Tried {
		return reg, false, conflict
	}
	works, err := c.PasswordWorks(ctx, u.ID, want.Password)
	if err != nil {
		return Registered{}, false, err
	}
	if !works {
		c.refused.Store(mine, conflict.Tried)
		return reg, false, conflict
	}
	c.refused.Delete(mine)
	return reg, false, nil
}

// checkDigest names a password check (checkPassword) by what decides it: the user, the
// sources of the two passwords, and the owner's retry; no password.
func checkDigest(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return fmt.Sprintf("%x", sum[:12])
}

// PasswordWorks tells whether Keystone gives the user with ID userID a token for
// password (an unscoped one, which is dropped). The request goes through the client's
// transport but not its session: a refusal does not make it authenticate again.
func (c *Client) PasswordWorks(ctx context.Context, userID, password string) (bool, error) {
	c.mu.Lock()
	sc := c.sc
	c.mu.Unlock()
	if sc == nil {
		return false, errors.New("checking a password: the client is not authenticated")
	}
	bare := &gophercloud.ServiceClient{ProviderClient: &gophercloud.ProviderClient{HTTPClient: sc.HTTPClient,
		UserAgent: sc.UserAgent}, Endpoint: sc.Endpoint, Type: sc.Type}
	err := tokens.Create(ctx, bare, &tokens.AuthOptions{UserID: userID, Password: password}).Err
	if StatusCode(err) == http.StatusUnauthorized {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("checking the password of user %s: %w", userID, err)
	}
	return true, nil
}

// PasswordConflictError tells that a Shared, Joined or Adopted user's password is not the
// one asked for: Owner, who shares the user and set its password, has another ("" for a
// user that existed before); Region, Owner is of another cluster.
type PasswordConflictError struct {
	User, Owner string
	Region      bool
	// Tried names the password check Keystone refused (a digest of what decides it, no
	// password), for the owner to record and give back as UserSpec.Refused.
	Tried string
}

func (e *PasswordConflictError) Error() string {
	if e.Owner == "" {
		return fmt.Sprintf("user %s existed before and is not this owner's: its password is never set here, and it is not this one", e.User)
	}
	by := strings.Join(ownerName(e.Owner), "/")
	if _, cluster := splitMark(e.Owner); e.Region && cluster != "" {
		by += " of the cluster " + cluster
	}
	return fmt.Sprintf("user %s has a password set by %s, and it is not this one", e.User, by)
}

// sameSource tells whether a user's password, recorded as set from have, is the one of
// want. A record of an earlier version, without "#<key>", stands for every key of that
// Secret version: its passwords are not set again at an upgrade. A shared user's
// source must be want itself (checkSharedPassword): two KeystoneServices may read two
// keys of one Secret.
func sameSource(have, want string) bool {
	source, _, _ := strings.Cut(want, "#")
	return have == want || have == source
}

// refusedLogins remembers, by credentials and the source of their password, the logins
// Keystone refused (401): a login is tried once per password and source, never again,
// because each refusal counts towards Keystone's lockout ([security_compliance]
// lockout_failure_attempts), and a locked-out user is locked out for everyone using it
// (the admin: the operator in every namespace). Whoever fixes the password in Keystone
// touches the Secret: a new source is tried once. The memory lives as long as the
// operator's process, and holds at most maxRefusedLogins entries per user of a Keystone
// (the oldest of that user's go): nobody's refusals can push another user's out.
// Logins go through attempt, one at a time per user of a Keystone, so that rounds
// logging in with one wrong password at once send it once.
type refusedLogins struct {
	mu    sync.Mutex
	byKey map[string]*LoginRefusedError
	// users holds, by userKey, the lock of a login under way and how many wait for it.
	users map[string]*userLogin
	// order lists, by user of a Keystone (userKey), its entries of byKey, oldest first.
	order map[string][]string
	// drop, when set, is told of credentials whose session a refused login again ended
	// (guard): Clients.Forget, so that the next Get says the refusal.
	drop func(Credentials)
	// record, when set, is told of each refusal of a login whose credentials name a
	// Holder: Clients.RecordRefusal.
	record func(context.Context, Credentials, string)
}

// maxRefusedLogins bounds the refusals remembered of one user of one Keystone.
const maxRefusedLogins = 64

// userKey is who logs in where: Keystone's URL, the user, its project and domain.
func userKey(creds Credentials) string {
	return strings.Join([]string{creds.URL, creds.User, creds.Project, creds.Domain}, "\x00")
}

// loginKey identifies a login: who logs in where with which password (a digest of it),
// and the source of the password; not the CA bundle the connection trusts: another CA
// does not make a refused password worth trying again.
func loginKey(creds Credentials) string { return passwordKey(creds) + "\x00" + creds.Source }

// passwordKey is what a login sends: who logs in where (userKey) and a digest of the
// password.
func passwordKey(creds Credentials) string {
	sum := sha256.Sum256([]byte(creds.Password))
	return userKey(creds) + "\x00" + string(sum[:])
}

// userLogin serialises the logins of one user of a Keystone: turn holds a token while
// a login is under way; waiting counts the holder and those waiting, for the last to
// drop it.
type userLogin struct {
	turn    chan struct{}
	waiting int
}

// attempt runs login, a login with creds, unless Keystone refused it before (here, or
// as recorded on creds' Holder), and remembers a refusal, and has it recorded on the
// Holder, before the next login of the same user may start: the KeystoneAPI's check and
// the registrations' sessions log in at once when the admin's Secret changes, and each
// refusal of theirs would count towards Keystone's lockout. It returns login's
// error, a LoginRefusedError for a refusal (Earlier when an earlier login had it), or
// ctx's error when ctx ends while it waits for its turn (nothing sent then).
func (l *refusedLogins) attempt(ctx context.Context, creds Credentials, login func() error) error {
	if l == nil {
		return login()
	}
	user := userKey(creds)
	l.mu.Lock()
	if l.users == nil {
		l.users = map[string]*userLogin{}
	}
	lock := l.users[user]
	if lock == nil {
		lock = &userLogin{turn: make(chan struct{}, 1)}
		l.users[user] = lock
	}
	lock.waiting++
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		if lock.waiting--; lock.waiting == 0 {
			delete(l.users, user)
		}
		l.mu.Unlock()
	}()
	select {
	case lock.turn <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("waiting for another login of user %s at %s: %w", creds.User, creds.URL, context.Cause(ctx))
	}
	defer func() { <-lock.turn }()
	if refused := l.refused(creds); refused != nil {
		return refused
	}
	err := login()
	refused := l.refuse(creds, err)
	if refused == nil {
		return err
	}
	l.mu.Lock()
	record := l.record
	l.mu.Unlock()
	// A login whose record creds carry was not sent (refused, above): this one is new.
	if digest := RefusalRecord(creds); record != nil && creds.Holder.Name != "" && digest != "" {
		record(ctx, creds, digest)
	}
	return refused
}

// refused is the remembered refusal of creds' login, or the one recorded on their Holder
// (Credentials.Recorded); nil when there is none.
func (l *refusedLogins) refused(creds Credentials) *LoginRefusedError {
	if creds.Recorded != "" && creds.Recorded == RefusalRecord(creds) {
		return &LoginRefusedError{User: creds.User, URL: creds.URL, Source: creds.Source, Earlier: true,
			RecordedOn: creds.Holder.String()}
	}
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.byKey[loginKey(creds)]
	if e == nil {
		return nil
	}
	again := *e
	again.Earlier = true
	return &again
}

// refuse remembers err, the failure of creds' login, when it is Keystone's refusal of
// the password (401), and returns it as a LoginRefusedError; nil for any other failure.
func (l *refusedLogins) refuse(creds Credentials, err error) *LoginRefusedError {
	if l == nil || StatusCode(err) != http.StatusUnauthorized {
		return nil
	}
	refused := &LoginRefusedError{User: creds.User, URL: creds.URL, Source: creds.Source, Err: err}
	l.mu.Lock()
	defer l.mu.Unlock()
	key, user := loginKey(creds), userKey(creds)
	if l.byKey == nil {
		l.byKey, l.order = map[string]*LoginRefusedError{}, map[string][]string{}
	}
	if _, seen := l.byKey[key]; !seen {
		l.order[user] = append(l.order[user], key)
	}
	l.byKey[key] = refused
	for len(l.order[user]) > maxRefusedLogins {
		delete(l.byKey, l.order[user][0])
		l.order[user] = l.order[user][1:]
	}
	return refused
}

// clear forgets the refusals of creds' password whatever their source: Keystone took
// that password since (the admin fixed it in Keystone, and a check that may try again,
// such as the KeystoneAPI's after it is touched, found it works).
func (l *refusedLogins) clear(creds Credentials) {
	prefix, user := passwordKey(creds)+"\x00", userKey(creds)
	l.mu.Lock()
	defer l.mu.Unlock()
	kept := l.order[user][:0]
	for _, key := range l.order[user] {
		if strings.HasPrefix(key, prefix) {
			delete(l.byKey, key)
			continue
		}
		kept = append(kept, key)
	}
	if len(kept) == 0 {
		delete(l.order, user)
	} else {
		l.order[user] = kept
	}
}

// guard wraps gophercloud's login again after a refused token (reauth): not tried with a
// password Keystone refused, and a refusal remembered.
func (l *refusedLogins) guard(creds Credentials, reauth func(context.Context) error) func(context.Context) error {
	if reauth == nil || l == nil {
		return reauth
	}
	return func(ctx context.Context) error {
		err := l.attempt(ctx, creds, func() error { return reauth(ctx) })
		refused, ok := LoginRefused(err)
		if !ok {
			return err
		}
		l.mu.Lock()
		drop := l.drop
		l.mu.Unlock()
		if drop != nil {
			drop(creds)
		}
		return refused
	}
}

// LoginRefusedError tells that Keystone refused the password of User (at URL) read from
// Source: now, or, Earlier, at an earlier login that is not tried again. It is a 401
// (StatusCode).
type LoginRefusedError struct {
	User, URL, Source string
	Earlier           bool
	// RecordedOn names the object the earlier refusal was read from (Credentials.Holder,
	// as "<namespace>/<name>"): it was recorded before the operator restarted.
	RecordedOn string
	// Err is Keystone's answer; nil for a refusal read from RecordedOn.
	Err error
}

func (e *LoginRefusedError) Error() string {
	msg := fmt.Sprintf("Keystone at %s refused the password of user %s", e.URL, e.User)
	switch {
	case e.RecordedOn != "":
		msg += fmt.Sprintf(" (at an earlier login, recorded on %s)", e.RecordedOn)
	case e.Earlier:
		msg += " (at an earlier login)"
	}
	return msg + "; a refused password is not tried again until its secret changes, as every refusal counts " +
		"towards Keystone's lockout"
}

func (e *LoginRefusedError) Unwrap() error { return e.Err }

// LoginRefused returns the LoginRefusedError in err, also from behind gophercloud's
// failure to log in again after a refused token (which does not unwrap).
func LoginRefused(err error) (*LoginRefusedError, bool) {
	var refused *LoginRefusedError
	if errors.As(err, &refused) {
		return refused, true
	}
	var reauth *gophercloud.ErrUnableToReauthenticate
	if errors.As(err, &reauth) && errors.As(reauth.ErrReauth, &refused) {
		return refused, true
	}
	return nil, false
}
