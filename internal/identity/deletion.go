package identity

import (
	"context"
	"fmt"

	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/endpoints"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/services"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/users"
)

// The Unchecked deletions below delete by ID whatever the entity is: only callers that
// decided it is theirs to delete (giveUpEntity, depart, a release) call them.

// deleteServiceUnchecked deletes the service id (Keystone deletes its endpoints with
// it); one already gone is fine.
func (c *Client) deleteServiceUnchecked(ctx context.Context, id string) error {
	if err := services.Delete(ctx, c.sc, id).ExtractErr(); err != nil && !notFound(err) {
		return fmt.Errorf("deleting service %s: %w", id, err)
	}
	c.locators.Delete("services/" + id)
	return nil
}

// deleteUserUnchecked deletes the user id; one already gone is fine.
func (c *Client) deleteUserUnchecked(ctx context.Context, id string) error {
	if err := users.Delete(ctx, c.sc, id).ExtractErr(); err != nil && !notFound(err) {
		return fmt.Errorf("deleting user %s: %w", id, err)
	}
	c.locators.Delete("users/" + id)
	return nil
}

// deleteEndpointUnchecked deletes the endpoint id; one already gone is fine.
func (c *Client) deleteEndpointUnchecked(ctx context.Context, id string) error {
	if err := endpoints.Delete(ctx, c.sc, id).ExtractErr(); err != nil && !notFound(err) {
		return fmt.Errorf("deleting endpoint %s: %w", id, err)
	}
	return nil
}

// DeleteService deletes the service with ID id if it is owner's (marked, or unmarked
// and claim allows it as Keystone has it: see classify); Keystone deletes its endpoints
// with it. A service that is gone, or not the owner's, is left alone.
func (c *Client) DeleteService(ctx context.Context, id, owner string, claim ServiceClaim) error {
	if id == "" {
		return nil
	}
	svc, err := c.getService(ctx, id)
	if err != nil || svc == nil {
		return err
	}
	ownership, _ := c.classify(svc.Owner, owner, claim.allows(svc))
	return c.giveUpEntity(ctx, "services", svc.ID, svc.Owner, owner, ownership, func() error {
		return c.deleteServiceUnchecked(ctx, id)
	})
}

// giveUpEntity ends owner's part in the entity id of kind, marked keeper, as owner
// relates to it (ownership), reading its owners of record afresh (depart): one of its
// own with no other owner is removed (remove); one other regions own or use too is left
// to them (the keeper hands it over, a co-owner or adopter leaves the record); a user
// shared within the cluster or another's loses only owner's record, if any.
func (c *Client) giveUpEntity(ctx context.Context, kind, id, keeper, owner string, ownership Ownership, remove func() error) error {
	d := departure{ref: owner, remove: remove, apply: true}
	switch ownership {
	case Owned:
		// Its mark may be an earlier form of owner's (a predecessor's, or without the
		// cluster), or none (claimed): the keeper as recorded leaves with owner.
		d.leaving = func(m string) bool { return m == owner || m == keeper }
	case Joined, Adopted:
		d.leaving = func(m string) bool { return m == owner || superseded(m, owner) }
	default:
		return c.forget(ctx, kind, id, owner)
	}
	_, err := c.depart(ctx, kind, id, d)
	return err
}

// DeleteUserNamed is DeleteUser for the user named name in the domain.
func (c *Client) DeleteUserNamed(ctx context.Context, domainID, name, owner string, claimUnmarked bool) error {
	if name == "" {
		return nil
	}
	u, err := c.findUser(ctx, domainID, name)
	if err != nil || u == nil {
		return err
	}
	// findUser passed over users with federated identities already.
	return c.deleteIfOwned(ctx, u, owner, claimUnmarked)
}

// DeleteOwnedUser deletes u, as read from Keystone, if it is owner's; one already gone
// is fine. claimUnmarked (keystone-operator's user, at a takeover) claims no user with
// federated identities, a person's (findUser), also one read by a recorded ID.
func (c *Client) DeleteOwnedUser(ctx context.Context, u *User, owner string, claimUnmarked bool) error {
	if claimUnmarked {
		federated, _, err := c.federated(ctx, u)
		if err != nil {
			return err
		}
		claimUnmarked = !federated
	}
	return c.deleteIfOwned(ctx, u, owner, claimUnmarked)
}

// deleteIfOwned is DeleteOwnedUser for a user known to have no federated identities
// that claimUnmarked could claim.
func (c *Client) deleteIfOwned(ctx context.Context, u *User, owner string, claimUnmarked bool) error {
	ownership, _ := c.classifyUser(u, owner, claimUnmarked)
	return c.giveUpEntity(ctx, "users", u.ID, u.Owner, owner, ownership, func() error {
		return c.deleteUserUnchecked(ctx, u.ID)
	})
}

// DeleteRegistration deletes what owner registered for a service: the service with ID
// knownID and the one of want's type and name, and the user with ID userID and the one
// of user's name (none when empty), each when it is owner's. What is gone, or not the
// owner's, stays.
func (c *Client) DeleteRegistration(ctx context.Context, knownID string, want ServiceSpec, userID string, user UserSpec) error {
	if err := c.deleteServices(ctx, knownID, want); err != nil {
		return err
	}
	return c.deleteUsers(ctx, userID, user)
}

// deleteServices deletes the service with ID knownID and the one of want's type and
// name, each when it is want's owner's (the one found by name, with OwnMarkOnly, only
// when it carries the owner's very mark).
func (c *Client) deleteServices(ctx context.Context, knownID string, want ServiceSpec) error {
	current, err := c.findService(ctx, "", want)
	if err != nil {
		return err
	}
	if current != nil && want.OwnMarkOnly && !sameOwner(current.Owner, want.Owner) {
		current = nil
	}
	for i, id := range []string{knownID, idOf(current)} {
		if i > 0 && id == knownID {
			continue
		}
		var claim ServiceClaim
		if id == knownID {
			claim = want.Claim
		}
		if err := c.DeleteService(ctx, id, want.Owner, claim); err != nil {
			return err
		}
	}
	return nil
}

// deleteUsers deletes the user with ID userID and the one of user's name, each when it
// is user's owner's (the one found by name, with OwnMarkOnly, only when it carries the
// owner's very mark). A claim is for the user of user.Name alone: an ID read from
// elsewhere (an earlier version's annotation, which a tenant can write) never claims
// another.
func (c *Client) deleteUsers(ctx context.Context, userID string, user UserSpec) error {
	named, err := c.findUserNamed(ctx, user)
	if err != nil {
		return err
	}
	if named != nil && user.OwnMarkOnly && !sameOwner(named.Owner, user.Owner) {
		named = nil
	}
	for i, id := range []string{userID, userIDOf(named)} {
		if id == "" || (i > 0 && id == userID) {
			continue
		}
		u, err := c.GetUser(ctx, id)
		if err != nil {
			return err
		}
		if u != nil {
			if err := c.DeleteOwnedUser(ctx, u, user.Owner, user.ClaimUnmarked && u.Name == user.Name); err != nil {
				return err
			}
		}
	}
	return nil
}

// findUserNamed is the user of user's name; nil when the name is empty or there is none.
func (c *Client) findUserNamed(ctx context.Context, user UserSpec) (*User, error) {
	if user.Name == "" {
		return nil, nil
	}
	return c.findUser(ctx, user.DomainID, user.Name)
}

func idOf(s *Service) string {
	if s == nil {
		return ""
	}
	return s.ID
}

func userIDOf(u *User) string {
	if u == nil {
		return ""
	}
	return u.ID
}
