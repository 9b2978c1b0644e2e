package identity

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

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
	tried := want.PasswordFrom + "\x00" + u.PasswordFrom + "\x00" + want.Retry
	if last, ok := c.refused.Load(u.ID); ok && last == tried {
		return reg, false, conflict
	}
	works, err := c.PasswordWorks(ctx, u.ID, want.Password)
	if err != nil {
		return Registered{}, false, err
	}
	if !works {
		c.refused.Store(u.ID, tried)
		return reg, false, conflict
	}
	c.refused.Delete(u.ID)
	return reg, false, nil
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
