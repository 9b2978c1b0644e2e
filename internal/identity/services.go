package identity

import (
	"context"
	"fmt"
	"slices"
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
	// Claim takes an unmarked service found by KnownID as the owner's when it allows it
	// (ServiceClaim).
	Claim ServiceClaim
	// OwnMarkOnly, in a deletion, removes the service found by type and name only when it
	// carries the owner's very mark (no predecessor's, none unmarked): for a name the
	// owner's KeystoneAPI no longer lets it use.
	OwnMarkOnly bool
}

// ServiceClaim tells whether an unmarked service, as Keystone has it, is the owner's to
// claim: registered for the owner before marks existed (by keystone-operator, whose
// proof names only an ID, as it names a service it found and used), under a type and
// name the owner may register. A nil ServiceClaim claims none.
type ServiceClaim func(svc *Service) bool

// allows tells whether c claims svc.
func (c ServiceClaim) allows(svc *Service) bool { return c != nil && svc != nil && c(svc) }

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
// owner's, or else the first by ID), creating it marked with the owner when missing,
// and, when it is the owner's, makes its description and enabled flag want's. What is
// not the owner's is never redefined: another region's or an unmarked one (adopted)
// that is defined otherwise is a DefinitionConflictError, nothing written; another
// owner's is a ForeignError. A service of want's type under another name, not the
// owner's, refuses the creation (TypeTakenError): a catalog has one service of a type.
func (c *Client) EnsureService(ctx context.Context, knownID string, want ServiceSpec) (Registered, bool, error) {
	svc, createdID, err := c.findOrCreateService(ctx, knownID, want)
	switch {
	case err != nil:
		return Registered{}, false, err
	case svc == nil:
		c.registered.Store(registeredKey(createdID, want.Owner), Owned)
		return Registered{ID: createdID, Ownership: Owned, Created: true}, true, nil
	}
	ownership, claim := c.classify(svc.Owner, want.Owner, svc.ID == knownID && want.Claim.allows(svc))
	switch ownership {
	case Foreign:
		return Registered{}, false, c.refuseService(ctx, svc, want)
	case Adopted:
		return c.useService(ctx, svc, want, ownership)
	case Joined:
		c.registered.Store(registeredKey(svc.ID, want.Owner), Joined)
		return c.useService(ctx, svc, want, ownership)
	}
	c.registered.Store(registeredKey(svc.ID, want.Owner), Owned)
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

// findOrCreateService returns the service want names (see pickService), or creates it
// and returns its ID; a creation that conflicts (someone created it meanwhile) returns
// the service found. A service of want's type under another name that is not the
// owner's refuses the creation (TypeTakenError).
func (c *Client) findOrCreateService(ctx context.Context, knownID string, want ServiceSpec) (*Service, string, error) {
	if knownID != "" {
		// The one this owner registered, found in one listing, as every round finds it.
		ofType, err := c.servicesOfType(ctx, want.Type)
		if svc := knownService(ofType, knownID, want); err != nil || svc != nil {
			return svc, "", err
		}
	}
	var all everything
	if err := c.list(ctx, &all, "services"); err != nil {
		return nil, "", err
	}
	slices.SortFunc(all.services, func(a, b Service) int { return strings.Compare(a.ID, b.ID) })
	ofType := slices.DeleteFunc(slices.Clone(all.services), func(s Service) bool { return s.Type != want.Type })
	if svc := pickService(ofType, want); svc != nil {
		return svc, "", nil
	}
	if taken := c.typeTaken(all.services, want); taken != nil {
		return nil, "", taken
	}
	created, err := c.createService(ctx, want)
	if conflict(err) {
		var svc *Service
		if svc, err = c.findService(ctx, "", want); err == nil && svc == nil {
			err = fmt.Errorf("service %s/%s conflicts but cannot be found", want.Type, want.Name)
		}
		if err == nil {
			return svc, "", nil
		}
	}
	if err != nil {
		return nil, "", fmt.Errorf("creating service %s/%s: %w", want.Type, want.Name, err)
	}
	return nil, created.ID, nil
}

// typeTaken is the TypeTakenError of the first service (by ID) among all that clients
// would take for want's: of want's type as they compare it (normalType: "_" as "-",
// without case) under another name, not want's owner's (its own under a previous
// serviceName is replaced once the new one exists); or of another type of its group
// (ServiceTypeGroup: volumev3 and block-storage, share and sharev2), not registered by
// want's owner's namespace (manila-operator registers share and sharev2 side by side).
// nil when there is none.
func (c *Client) typeTaken(all []Service, want ServiceSpec) *TypeTakenError {
	wantType, wantGroup := normalType(want.Type), ServiceTypeGroup(want.Type)
	for _, s := range all {
		if ServiceTypeGroup(s.Type) != wantGroup || (s.Type == want.Type && s.Name == want.Name) {
			continue
		}
		taken := &TypeTakenError{Type: want.Type, Found: s.Type, Name: s.Name, ID: s.ID, Owner: s.Owner}
		if normalType(s.Type) == wantType {
			if ownership, _ := c.classify(s.Owner, want.Owner, false); ownership != Owned {
				return taken
			}
			continue
		}
		if !sameNamespace(s.Owner, want.Owner) {
			return taken
		}
	}
	return nil
}

// sameNamespace tells whether mark names an object of owner's kind and namespace (of this
// cluster or another: a region's); false for no mark.
func sameNamespace(mark, owner string) bool {
	m, ok1 := ParseMark(mark)
	o, ok2 := ParseMark(owner)
	return ok1 && ok2 && m.Kind == o.Kind && m.Namespace == o.Namespace
}

// TypeTakenError refuses a second service of a type (Type, asked for): Keystone's
// catalog would list both, and clients take whichever comes first. Found, Name, ID and
// Owner (its mark, "" for none) are the one there, Found its type (an alias of Type's,
// or Type as clients compare it).
type TypeTakenError struct {
	Type, Found, Name, ID, Owner string
}

func (e *TypeTakenError) Error() string {
	by := "which this operator did not register (made by hand, by keystone-manage bootstrap, or by keystone-operator)"
	if e.Owner != "" {
		by = "registered by " + strings.Join(ownerName(e.Owner), "/")
		if _, cluster := splitMark(e.Owner); cluster != "" {
			by += " of the cluster " + cluster
		}
	}
	what := "of type " + e.Type
	if e.Found != e.Type {
		what = fmt.Sprintf("of type %s (which clients take for %s)", e.Found, e.Type)
	}
	return fmt.Sprintf("Keystone has a service %s already: %s (%s), %s; a catalog has one service of a type", what,
		e.Name, e.ID, by)
}

// useService uses svc, another region's (Joined) or unmarked (Adopted), as want's owner
// once it is as want defines it: never changed, and want's owner recorded among its
// owners of record (an adopter too, so that whoever claims it later, such as a region
// switching from keystone-operator, knows this one still uses it). One defined otherwise
// is a DefinitionConflictError, and want's owner is not (or no longer) on its record:
// only an owner that agrees with the keeper may keep it after the keeper.
func (c *Client) useService(ctx context.Context, svc *Service, want ServiceSpec, ownership Ownership) (Registered, bool, error) {
	reg := Registered{ID: svc.ID, Ownership: ownership, Keeper: svc.Owner}
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

// createService creates the service want defines, marked with its owner; the Seen of
// ctx, if any, records it as sent.
func (c *Client) createService(ctx context.Context, want ServiceSpec) (*services.Service, error) {
	created, err := services.Create(ctx, c.sc, markedService{CreateOpts: services.CreateOpts{Type: want.Type, Name: want.Name,
		Description: want.Description, Enabled: &want.Enabled}, owner: want.Owner}).Extract()
	if s := seenFrom(ctx); s != nil && err == nil {
		s.sawServices([]Service{{ID: created.ID, Type: want.Type, Name: want.Name, Description: want.Description,
			Enabled: want.Enabled, Owner: want.Owner}}, false)
	}
	return created, err
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

// findService returns the service of want's type and name (the one known by ID, else as
// pickService picks); nil when there is none.
func (c *Client) findService(ctx context.Context, knownID string, want ServiceSpec) (*Service, error) {
	ofType, err := c.servicesOfType(ctx, want.Type)
	if err != nil {
		return nil, err
	}
	if svc := knownService(ofType, knownID, want); svc != nil {
		return svc, nil
	}
	return pickService(ofType, want), nil
}

// knownService is, among ofType (services of want's type), the one of ID knownID when it
// has want's name; nil when it has not, or is not there, or knownID is "".
func knownService(ofType []Service, knownID string, want ServiceSpec) *Service {
	i := slices.IndexFunc(ofType, func(s Service) bool { return s.ID == knownID && s.Name == want.Name })
	if knownID == "" || i < 0 {
		return nil
	}
	return &ofType[i]
}

// servicesOfType lists the services of type serviceType, by ID.
func (c *Client) servicesOfType(ctx context.Context, serviceType string) ([]Service, error) {
	all, err := c.listServices(ctx, serviceType)
	if err != nil {
		return nil, err
	}
	// A list filtered by type can hold others' only if Keystone ignored the filter.
	all = slices.DeleteFunc(all, func(s Service) bool { return s.Type != serviceType })
	slices.SortFunc(all, func(a, b Service) int { return strings.Compare(a.ID, b.ID) })
	return all, nil
}

// pickService returns, among ofType, the service of want's name: the owner's, else an
// unmarked one, else another owner's, the first by ID of each; nil when there is none.
func pickService(ofType []Service, want ServiceSpec) *Service {
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
	var best *Service
	for i := range ofType {
		s := &ofType[i]
		if s.Name == want.Name && (best == nil || rank(*s) < rank(*best)) {
			best = s
		}
	}
	return best
}

// DefinitionConflictError tells that an entity that is not this owner's, kept by another
// region (Keeper) or unmarked (Keeper ""), is not defined as this owner's spec says:
// Have against Want. It is never changed: no region breaks another, and no namespace
// redefines what somebody else made.
type DefinitionConflictError struct {
	Kind, Name, Keeper string
	Have, Want         string
}

func (e *DefinitionConflictError) Error() string {
	if e.Keeper == "" {
		return fmt.Sprintf("%s %s existed before and is not this owner's: it has %s, where this spec says %s, and it is "+
			"never changed here", e.Kind, e.Name, e.Have, e.Want)
	}
	by := strings.Join(ownerName(e.Keeper), "/")
	if _, cluster := splitMark(e.Keeper); cluster != "" {
		by += " of the cluster " + cluster
	}
	return fmt.Sprintf("%s %s is kept by %s with %s, where this spec says %s", e.Kind, e.Name, by, e.Have, e.Want)
}
