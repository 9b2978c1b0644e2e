package identity

import (
	"context"
	"fmt"

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
	for _, name := range []string{loc.name, ""} {
		all, err := c.listUsers(ctx, loc.domainID, name)
		if err != nil {
			return nil, err
		}
		for i := range all {
			if all[i].ID == id {
				c.locators.Store("users/"+id, locator{domainID: loc.domainID, name: all[i].Name})
				return &all[i], nil
			}
		}
	}
	c.locators.Delete("users/" + id)
	return nil, nil
}

// getService returns the service with ID id as Keystone's database has it; nil when it
// is gone.
func (c *Client) getService(ctx context.Context, id string) (*Service, error) {
	loc, found, err := c.locate(ctx, "services", id)
	if err != nil || !found {
		return nil, err
	}
	// By its type first; its type changed meanwhile (its copy stale), among all.
	for _, serviceType := range []string{loc.serviceType, ""} {
		all, err := c.listServices(ctx, serviceType)
		if err != nil {
			return nil, err
		}
		for i := range all {
			if all[i].ID == id {
				c.locators.Store("services/"+id, locator{serviceType: all[i].Type})
				return &all[i], nil
			}
		}
	}
	c.locators.Delete("services/" + id)
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
	pages, err := users.List(c.sc, users.ListOpts{DomainID: domainID, Name: name}).AllPages(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing users named %q: %w", name, err)
	}
	var all []User
	if err := pages.(users.UserPage).ExtractIntoSlicePtr(&all, "users"); err != nil {
		return nil, fmt.Errorf("reading users named %q: %w", name, err)
	}
	return all, nil
}

// listServices lists the services of type serviceType (all when "").
func (c *Client) listServices(ctx context.Context, serviceType string) ([]Service, error) {
	pages, err := services.List(c.sc, services.ListOpts{ServiceType: serviceType}).AllPages(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing services of type %q: %w", serviceType, err)
	}
	var all []Service
	if err := pages.(services.ServicePage).ExtractIntoSlicePtr(&all, "services"); err != nil {
		return nil, fmt.Errorf("reading services of type %q: %w", serviceType, err)
	}
	return all, nil
}
