package identity

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/services"
)

// Each Ensure function looks up before it creates, so that a crash between a create
// and the status write never leaves a duplicate, and treats 409 on create as "someone
// else created it": it looks up again. changed tells whether it wrote to Keystone.

// ServiceSpec is a catalog service.
type ServiceSpec struct {
	Type, Name, Description string
	Enabled                 bool
	// Owner marks the service when it is created (OwnerAttribute).
	Owner string
	// ClaimUnmarked takes an unmarked service found by KnownID as the owner's: it was
	// registered for the owner before marks existed (by keystone-operator).
	ClaimUnmarked bool
}

// Service is a catalog service as Keystone lists it, with the owner mark.
type Service struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Enabled     bool   `json:"enabled"`
	Owner       string `json:"keystone_operator_owner"`
	Owners      Owners `json:"keystone_operator_owners"`
}

// EnsureService finds the service of want's type and name (the one known by ID, the
// owner's, or else the first by ID), creating it marked with the owner when missing
// (an existing one is adopted, never taken), and updates description and enabled.
func (c *Client) EnsureService(ctx context.Context, knownID string, want ServiceSpec) (Registered, bool, error) {
	svc, createdID, err := c.findOrCreateService(ctx, knownID, want)
	switch {
	case err != nil:
		return Registered{}, false, err
	case svc == nil:
		return Registered{ID: createdID, Ownership: Owned}, true, nil
	}
	ownership, claim := c.classify(svc.Owner, want.Owner, want.ClaimUnmarked && svc.ID == knownID)
	if ownership == Foreign {
		return Registered{}, false, c.refuseService(ctx, svc, want)
	}
	if ownership == Joined {
		return c.joinService(ctx, svc, want)
	}
	changed := false
	if claim {
		if err := c.claim(ctx, "services", svc.ID, svc.Owner, svc.Owners, want.Owner); err != nil {
			return Registered{}, false, err
		}
		changed = true
	}
	if svc.Description != want.Description || svc.Enabled != want.Enabled {
		if _, err := services.Update(ctx, c.sc, svc.ID, services.UpdateOpts{Description: &want.Description,
			Enabled: &want.Enabled}).Extract(); err != nil {
			return Registered{}, false, fmt.Errorf("updating service %s: %w", svc.ID, err)
		}
		changed = true
	}
	if ownership == Adopted {
		// Recorded as a user of it, so that whoever claims it later (a region switching
		// from keystone-operator) knows this one still uses it.
		joined, err := c.join(ctx, "services", svc.ID, want.Owner, nil, "")
		if err != nil {
			return Registered{}, false, err
		}
		changed = changed || joined
	}
	return Registered{ID: svc.ID, Ownership: ownership, Keeper: svc.Owner}, changed, nil
}

// refuseService is the ForeignError of svc, another owner's, refused to want's owner:
// changing it, or putting endpoints under it, would be undone (and the endpoints
// deleted) when that owner goes. A record of want's owner as its adopter (before
// another claimed it) goes.
func (c *Client) refuseService(ctx context.Context, svc *Service, want ServiceSpec) error {
	if svc.Owners.recorded(want.Owner) {
		if err := c.forget(ctx, "services", svc.ID, want.Owner); err != nil {
			return err
		}
	}
	return foreign("service", want.Type+"/"+want.Name, svc.Owner, want.Owner)
}

// findOrCreateService returns the service want names (see findService), or creates it
// and returns its ID; a creation that conflicts (someone created it meanwhile) returns
// the service found.
func (c *Client) findOrCreateService(ctx context.Context, knownID string, want ServiceSpec) (*Service, string, error) {
	svc, err := c.findService(ctx, knownID, want)
	if err != nil || svc != nil {
		return svc, "", err
	}
	created, err := c.createService(ctx, want)
	if conflict(err) {
		if svc, err = c.findService(ctx, "", want); err == nil && svc == nil {
			err = fmt.Errorf("service %s/%s conflicts but cannot be found", want.Type, want.Name)
		}
	}
	if err != nil {
		return nil, "", fmt.Errorf("creating service %s/%s: %w", want.Type, want.Name, err)
	}
	if svc != nil {
		return svc, "", nil
	}
	return nil, created.ID, nil
}

// joinService joins svc, another region's (Joined), as want's owner once it is as want
// defines it: used, never changed. One defined otherwise is a DefinitionConflictError,
// and want's owner is not (or no longer) among its owners of record: only an owner that
// agrees with the keeper may keep it after the keeper.
func (c *Client) joinService(ctx context.Context, svc *Service, want ServiceSpec) (Registered, bool, error) {
	reg := Registered{ID: svc.ID, Ownership: Joined, Keeper: svc.Owner}
	if svc.Description != want.Description || svc.Enabled != want.Enabled {
		if err := c.forget(ctx, "services", svc.ID, want.Owner); err != nil {
			return Registered{}, false, err
		}
		return reg, false, &DefinitionConflictError{Kind: "service", Name: want.Type + "/" + want.Name, Keeper: svc.Owner,
			Have: fmt.Sprintf("description %q, enabled %t", svc.Description, svc.Enabled),
			Want: fmt.Sprintf("description %q, enabled %t", want.Description, want.Enabled)}
	}
	changed, err := c.join(ctx, "services", svc.ID, want.Owner, nil, "")
	return reg, changed, err
}

func (c *Client) createService(ctx context.Context, want ServiceSpec) (*services.Service, error) {
	return services.Create(ctx, c.sc, markedService{CreateOpts: services.CreateOpts{Type: want.Type, Name: want.Name,
		Description: want.Description, Enabled: &want.Enabled}, owner: want.Owner}).Extract()
}

// markedService is a create request that also carries the owner mark.
type markedService struct {
	services.CreateOpts
	owner string
}

func (m markedService) ToServiceCreateMap() (map[string]any, error) {
	body, err := m.CreateOpts.ToServiceCreateMap()
	if err != nil {
		return nil, err
	}
	return withMark(body, "service", m.owner)
}

// findService returns the service of want's type and name: the one known by ID, else
// the owner's, else an unmarked one, else another owner's, the first by ID of each;
// nil when there is none.
func (c *Client) findService(ctx context.Context, knownID string, want ServiceSpec) (*Service, error) {
	if knownID != "" {
		svc, err := c.getService(ctx, knownID)
		if err != nil {
			return nil, err
		}
		if svc != nil && svc.Type == want.Type && svc.Name == want.Name {
			return svc, nil
		}
	}
	pages, err := services.List(c.sc, services.ListOpts{ServiceType: want.Type, Name: want.Name}).AllPages(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing services of type %s: %w", want.Type, err)
	}
	var all []Service
	if err := pages.(services.ServicePage).ExtractIntoSlicePtr(&all, "services"); err != nil {
		return nil, fmt.Errorf("reading services of type %s: %w", want.Type, err)
	}
	var found []Service
	for _, s := range all {
		if s.Type == want.Type && s.Name == want.Name {
			found = append(found, s)
		}
	}
	if len(found) == 0 {
		return nil, nil
	}
	rank := func(s Service) int {
		switch {
		case sameOwner(s.Owner, want.Owner):
			return 0
		case s.Owner == "":
			return 1
		default:
			return 2
		}
	}
	sort.Slice(found, func(i, j int) bool {
		if ri, rj := rank(found[i]), rank(found[j]); ri != rj {
			return ri < rj
		}
		return found[i].ID < found[j].ID
	})
	return &found[0], nil
}

// getService reads a service by ID; nil when it is gone.
func (c *Client) getService(ctx context.Context, id string) (*Service, error) {
	var svc Service
	err := services.Get(ctx, c.sc, id).ExtractIntoStructPtr(&svc, "service")
	if notFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading service %s: %w", id, err)
	}
	return &svc, nil
}

// DefinitionConflictError tells that an entity another region keeps (Keeper) is not
// defined as this owner's spec says: Have against Want. Neither is changed: no region
// breaks another.
type DefinitionConflictError struct {
	Kind, Name, Keeper string
	Have, Want         string
}

func (e *DefinitionConflictError) Error() string {
	by := strings.Join(ownerName(e.Keeper), "/")
	if _, cluster := splitMark(e.Keeper); cluster != "" {
		by += " of the cluster " + cluster
	}
	return fmt.Sprintf("%s %s is kept by %s with %s, where this spec says %s", e.Kind, e.Name, by, e.Have, e.Want)
}
