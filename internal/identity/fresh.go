package identity

import (
	"context"
	"fmt"
	"net/url"

	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/services"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/users"
)

// Keystone caches what it reads by ID ([cache] enabled, as this operator and
// keystone-operator configure it), and its copy can be older than its database for the
// cache's whole lifetime (ten minutes by default): update_user drops the user's copy
// before it writes the change (keystone/identity/core.py), so a read by ID between the
// two caches the old row again, and a read that began before any other write
// (update_service, a deletion) can put the old row back after the write dropped it.
// Seen with Debian's Keystone 22.0.2: a user read by ID in a loop while a PATCH with a
// password ran still lacked the PATCH afterwards in 8 of 10 tries (TestKeystoneReadByIDLags
// in tests/multiregion shows it every run). Listings are never cached. So what decides what
// the operator does to an entity (its mark, its owners of record, whether it exists) is
// read from a listing: a read by ID only locates it (a user's domain and name, a
// service's type; remembered by ID), and a listing by those reads it.

// locator is what lists an entity: a user's domain and name, a service's type.
type locator struct{ domainID, name, serviceType string }

// GetUser returns the user with ID id as Keystone's database has it; nil when there is
// none.
func (c *Client) GetUser(ctx context.Context, id string) (*User, error) {
	loc, found, err := c.locate(ctx, "users", id)
	if err != nil || !found {
		return nil, err
	}
	// By its name first; renamed meanwhile (its copy stale), by its domain.
	return findListed(c, "users/"+id, []string{loc.name, ""},
		func(name string) ([]User, error) { return c.listUsers(ctx, loc.domainID, name) },
		func(u *User) (string, locator) { return u.ID, locator{domainID: loc.domainID, name: u.Name} }, id)
}

// getService returns the service with ID id as Keystone's database has it; nil when it
// is gone.
func (c *Client) getService(ctx context.Context, id string) (*Service, error) {
	loc, found, err := c.locate(ctx, "services", id)
	if err != nil || !found {
		return nil, err
	}
	// By its type first; its type changed meanwhile (its copy stale), among all.
	return findListed(c, "services/"+id, []string{loc.serviceType, ""},
		func(serviceType string) ([]Service, error) { return c.listServices(ctx, serviceType) },
		func(s *Service) (string, locator) { return s.ID, locator{serviceType: s.Type} }, id)
}

// findListed returns the entity id from the first of the listings (list of each filter)
// that has it, and remembers under key what located it (read reads its ID and locator);
// when none has it, it is gone, and so is what located it.
func findListed[T any](c *Client, key string, filters []string, list func(string) ([]T, error),
	read func(*T) (string, locator), id string) (*T, error) {
	for _, filter := range filters {
		all, err := list(filter)
		if err != nil {
			return nil, err
		}
		for i := range all {
			if got, loc := read(&all[i]); got == id {
				c.locators.Store(key, loc)
				return &all[i], nil
			}
		}
	}
	c.locators.Delete(key)
	return nil, nil
}

// locate returns what lists the entity id of kind ("users", "services"): remembered, or
// read by ID (Keystone's cached copy will do: a rename shows in the listing). found is
// false when Keystone has no such entity (a miss is never cached).
func (c *Client) locate(ctx context.Context, kind, id string) (locator, bool, error) {
	if loc, ok := c.locators.Load(kind + "/" + id); ok {
		return loc.(locator), true, nil
	}
	var loc locator
	var err error
	switch kind {
	case "users":
		var u struct {
			DomainID string `json:"domain_id"`
			Name     string `json:"name"`
		}
		err = users.Get(ctx, c.sc, id).ExtractIntoStructPtr(&u, "user")
		loc = locator{domainID: u.DomainID, name: u.Name}
	default:
		var s struct {
			Type string `json:"type"`
		}
		err = services.Get(ctx, c.sc, id).ExtractIntoStructPtr(&s, "service")
		loc = locator{serviceType: s.Type}
	}
	switch {
	case notFound(err):
		return locator{}, false, nil
	case err != nil:
		return locator{}, false, fmt.Errorf("reading %s %s: %w", singular(kind), id, err)
	}
	c.locators.Store(kind+"/"+id, loc)
	return loc, true, nil
}

// listUsers lists the users of the domain (every domain when ""), of name only when name
// is not "".
func (c *Client) listUsers(ctx context.Context, domainID, name string) ([]User, error) {
	var all []User
	err := c.listed(ctx, "users", url.Values{"domain_id": nonEmpty(domainID), "name": nonEmpty(name)}, &all)
	return all, err
}

// listServices lists the services of type serviceType (all when "").
func (c *Client) listServices(ctx context.Context, serviceType string) ([]Service, error) {
	var all []Service
	err := c.listed(ctx, "services", url.Values{"type": nonEmpty(serviceType)}, &all)
	return all, err
}

// nonEmpty is a query parameter's values: none for "" (no filter).
func nonEmpty(value string) []string {
	if value == "" {
		return nil
	}
	return []string{value}
}
