package identity

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"

	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/roles"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/services"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/users"
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

// Registered is an entity as ensured: its ID and whether the owner owns it.
type Registered struct {
	ID        string
	Ownership Ownership
	// Created tells that this call created it.
	Created bool
	// Keeper is the mark of the owner a Shared or Joined entity belongs to.
	Keeper string
	// Owners are a user's owners of record in other regions, with the roles each asks
	// for (OwnersAttribute): the keeper gives it their union.
	Owners Owners
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

// claim marks the entity id of kind, marked mark (its predecessor's, an earlier form of
// owner's, or none) and with owners of record owners, as owner's, dropping from the record
// the marks owner supersedes (mark, its predecessors').
func (c *Client) claim(ctx context.Context, kind, id, mark string, owners Owners, owner string) error {
	update := map[string]any{OwnerAttribute: owner}
	if pruned := owners.without(func(m string) bool { return m == mark || superseded(m, owner) }); len(pruned) < len(owners) {
		update[OwnersAttribute] = pruned
	}
	if err := c.patchEntity(ctx, kind, id, update); err != nil {
		return fmt.Errorf("marking %s %s as %s's: %w", singular(kind), id, owner, err)
	}
	return nil
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

// DeleteService deletes the service with ID id if it is owner's (marked, or unmarked
// and claimUnmarked: see classify); Keystone deletes its endpoints with it. A service
// that is gone, or not the owner's, is left alone.
func (c *Client) DeleteService(ctx context.Context, id, owner string, claimUnmarked bool) error {
	if id == "" {
		return nil
	}
	svc, err := c.getService(ctx, id)
	if err != nil || svc == nil {
		return err
	}
	ownership, _ := c.classify(svc.Owner, owner, claimUnmarked)
	return c.giveUpEntity(ctx, "services", svc.ID, svc.Owner, owner, ownership, func() error {
		return c.deleteService(ctx, id)
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

// EnsureProject returns the ID of a project, creating it when missing.
func (c *Client) EnsureProject(ctx context.Context, domainID, name string) (string, bool, error) {
	key := domainID + "/" + name
	if id, ok := c.projectIDs.Load(key); ok {
		return id.(string), false, nil
	}
	find := func() (string, error) {
		pages, err := projects.List(c.sc, projects.ListOpts{DomainID: domainID, Name: name}).AllPages(ctx)
		if err != nil {
			return "", fmt.Errorf("listing projects named %s: %w", name, err)
		}
		all, err := projects.ExtractProjects(pages)
		if err != nil || len(all) == 0 {
			return "", err
		}
		return all[0].ID, nil
	}
	id, err := find()
	changed := false
	if err == nil && id == "" {
		var p *projects.Project
		p, err = projects.Create(ctx, c.sc, projects.CreateOpts{DomainID: domainID, Name: name,
			Description: "Service users of OpenStack services"}).Extract()
		switch {
		case conflict(err):
			id, err = find()
		case err == nil:
			id, changed = p.ID, true
		}
	}
	if err != nil {
		return "", false, fmt.Errorf("ensuring project %s: %w", name, err)
	}
	c.projectIDs.Store(key, id)
	return id, changed, nil
}

// PasswordFromAttribute records on a user, in the request that sets its password,
// where that password came from (UserSpec.PasswordFrom): a password whose source is
// unchanged is not set again, and the record cannot drift from the password, as a
// record kept anywhere else could when a crash falls between the two writes.
const PasswordFromAttribute = "keystone_operator_password_from"

// UserSpec is a service user.
type UserSpec struct {
	Name, DomainID, ProjectID, Password string
	// PasswordFrom names the source of Password (for a Secret,
	// "<uid>/<resourceVersion>#<key>"; no password, only where it is kept). A user whose
	// PasswordFromAttribute differs (sameSource)
	// gets the password set, and the attribute with it.
	PasswordFrom string
	// Owner marks the user when it is created (OwnerAttribute).
	Owner string
	// ClaimUnmarked takes an unmarked user of that name as the owner's (keystone-operator
	// created it for the owner before marks existed).
	ClaimUnmarked bool
	// Roles are the roles the owner asks the user to have, recorded among its owners of
	// record where other regions own it too (OwnersAttribute).
	Roles []string
	// Sharing, when set, is asked about a user that carries another owner's mark: shared,
	// the user is Shared, not Foreign (its password is that owner's to set: a password
	// that differs is a PasswordConflictError); takeOver, that owner is gone and the user
	// becomes this one's (claimed, its password set); neither, it stays Foreign.
	Sharing func(ctx context.Context, mark string) (shared, takeOver bool, err error)
	// Retry, when it changes, has a password Keystone refused tried again though its
	// source did not change (the owner's resourceVersion: an admin who set the user's
	// password by hand touches the object).
	Retry string
}

// User is a user as Keystone lists it, with the owner mark.
type User struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Owner        string `json:"keystone_operator_owner"`
	PasswordFrom string `json:"keystone_operator_password_from"`
	Owners       Owners `json:"keystone_operator_owners"`
}

// EnsureUser returns the user, creating it with its password, the owner's mark and
// the password's source when missing, and setting the password (with its source) on an
// existing one whose recorded source is not want.PasswordFrom. An unmarked user is
// adopted (used, never deleted, its password checked and never set: a
// PasswordConflictError when want's is not its password); a user another owner registered
// is refused with a ForeignError, or the two would overwrite each other's password. A
// claim (ClaimUnmarked, or a predecessor's mark) is written in the same request as the
// password.
func (c *Client) EnsureUser(ctx context.Context, want UserSpec) (Registered, bool, error) {
	u, err := c.findUser(ctx, want.DomainID, want.Name)
	if err != nil {
		return Registered{}, false, err
	}
	if u == nil {
		var created string
		switch created, u, err = c.createUser(ctx, want); {
		case err != nil:
			return Registered{}, false, err
		case u == nil:
			return Registered{ID: created, Ownership: Owned, Created: true}, true, nil
		}
	}
	ownership, claim := c.classify(u.Owner, want.Owner, want.ClaimUnmarked)
	if ownership == Foreign && want.Sharing != nil {
		if ownership, claim, err = shareOrTake(ctx, want.Sharing, u.Owner); err != nil {
			return Registered{}, false, err
		}
	}
	if (ownership == Foreign || ownership == Shared) && u.Owners.recorded(want.Owner) {
		// Recorded as an adopter before another claimed it: another's now, or shared
		// within the cluster (whose sharers keep it among them), on no record.
		if err := c.forget(ctx, "users", u.ID, want.Owner); err != nil {
			return Registered{}, false, err
		}
	}
	switch ownership {
	case Foreign:
		return Registered{}, false, foreign("user", want.Name, u.Owner, want.Owner)
	case Shared:
		// Another's password: checked, never set. Setting it would hand whoever writes
		// the Secret a user that is not this owner's.
		return c.checkPassword(ctx, u, want, ownership)
	case Joined, Adopted:
		// Another region's, or a user that existed before: its password checked, never
		// set, and this owner recorded as one using it.
		return c.joinUser(ctx, u, want, ownership)
	}
	return c.updateOwnedUser(ctx, u, want, ownership, claim)
}

// updateOwnedUser brings u, this owner's (Owned, or claimed), to want: the claim's mark,
// the password when set from another source. Reported with the other owners of record
// and the roles they ask for.
func (c *Client) updateOwnedUser(ctx context.Context, u *User, want UserSpec, ownership Ownership, claim bool) (Registered, bool, error) {
	// A claim writes the mark (an earlier version's mark gaining the cluster at an
	// upgrade, a predecessor's replaced) and drops the marks it supersedes from the
	// record; the password only when it was set from another source.
	update := map[string]any{}
	if !sameSource(u.PasswordFrom, want.PasswordFrom) {
		update["password"], update[PasswordFromAttribute] = want.Password, want.PasswordFrom
	}
	own := func(m string) bool { return m == want.Owner || m == u.Owner || superseded(m, want.Owner) }
	if claim {
		update[OwnerAttribute] = want.Owner
		if pruned := u.Owners.without(own); len(pruned) < len(u.Owners) {
			update[OwnersAttribute] = pruned
		}
	}
	reg := Registered{ID: u.ID, Ownership: ownership, Owners: u.Owners.without(own).coOwners(want.Owner)}
	if len(update) == 0 {
		return reg, false, nil
	}
	if err := c.patchEntity(ctx, "users", u.ID, update); err != nil {
		return Registered{}, false, fmt.Errorf("updating user %s: %w", want.Name, err)
	}
	return reg, true, nil
}

// joinUser checks want's password against u, another region's (Joined) or unmarked
// (Adopted), never setting it, and once it holds records want's owner among u's owners
// of record, asking for want's roles: the keeper gives the user their union, and only
// an owner that proved the password may keep the user after its keeper. Without the
// password (a PasswordConflictError) the owner is not (or no longer) recorded, and asks
// for no role.
func (c *Client) joinUser(ctx context.Context, u *User, want UserSpec, ownership Ownership) (Registered, bool, error) {
	reg, _, err := c.checkPassword(ctx, u, want, ownership)
	var conflict *PasswordConflictError
	if errors.As(err, &conflict) {
		if err := c.forget(ctx, "users", u.ID, want.Owner); err != nil {
			return Registered{}, false, err
		}
		return reg, false, conflict
	}
	if err != nil {
		return Registered{}, false, err
	}
	changed, err := c.join(ctx, "users", u.ID, want.Owner, want.Roles, "")
	return reg, changed, err
}

// shareOrTake is the ownership of a user marked by another owner (mark), as sharing
// says: Shared, Owned and claimed, or Foreign.
func shareOrTake(ctx context.Context, sharing func(context.Context, string) (bool, bool, error), mark string) (Ownership, bool, error) {
	shared, takeOver, err := sharing(ctx, mark)
	switch {
	case err != nil:
		return Foreign, false, err
	case takeOver:
		return Owned, true, nil
	case shared:
		return Shared, false, nil
	}
	return Foreign, false, nil
}

// createUser creates the user want names, marked with its owner and its password's
// source, and returns its ID; or, when someone else created it meanwhile (409), that
// user as found, its password not known to be ours.
func (c *Client) createUser(ctx context.Context, want UserSpec) (string, *User, error) {
	enabled := true
	created, err := users.Create(ctx, c.sc, markedUser{CreateOpts: users.CreateOpts{Name: want.Name, DomainID: want.DomainID,
		DefaultProjectID: want.ProjectID, Password: want.Password, Enabled: &enabled,
		Extra: map[string]any{PasswordFromAttribute: want.PasswordFrom}}, owner: want.Owner}).Extract()
	if !conflict(err) {
		if err != nil {
			return "", nil, fmt.Errorf("creating user %s: %w", want.Name, err)
		}
		return created.ID, nil, nil
	}
	u, err := c.findUser(ctx, want.DomainID, want.Name)
	if err != nil || u == nil {
		return "", nil, fmt.Errorf("user %s conflicts but cannot be found: %w", want.Name, err)
	}
	u.PasswordFrom = ""
	return "", u, nil
}

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

// HandOverUser moves the mark of the user named name from owner (when the user is
// owner's: see classify) to next, who shares it and stays: the user outlives owner, and
// next sets its password and roles from then on. A user that is gone, or not owner's,
// is left as it is. It tells whether it moved the mark.
func (c *Client) HandOverUser(ctx context.Context, domainID, name, owner string, claimUnmarked bool, next string) (bool, error) {
	u, err := c.findUser(ctx, domainID, name)
	if err != nil || u == nil {
		return false, err
	}
	if ownership, _ := c.classify(u.Owner, owner, claimUnmarked); ownership != Owned {
		return false, nil
	}
	if len(u.Owners) == 0 {
		return true, c.mark(ctx, "users", u.ID, next)
	}
	// Other regions own it too: next keeps it among them, and records its roles itself.
	if err := c.patchEntity(ctx, "users", u.ID, map[string]any{OwnerAttribute: next,
		OwnersAttribute: u.Owners.without(func(m string) bool { return m == u.Owner })}); err != nil {
		return false, fmt.Errorf("handing user %s over to %s: %w", name, next, err)
	}
	return true, nil
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

// markedUser is a create request that also carries the owner mark.
type markedUser struct {
	users.CreateOpts
	owner string
}

func (m markedUser) ToUserCreateMap() (map[string]any, error) {
	body, err := m.CreateOpts.ToUserCreateMap()
	if err != nil {
		return nil, err
	}
	return withMark(body, "user", m.owner)
}

// findUser returns the user named name in the domain, nil when there is none.
func (c *Client) findUser(ctx context.Context, domainID, name string) (*User, error) {
	pages, err := users.List(c.sc, users.ListOpts{DomainID: domainID, Name: name}).AllPages(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing users named %s: %w", name, err)
	}
	var all []User
	if err := pages.(users.UserPage).ExtractIntoSlicePtr(&all, "users"); err != nil {
		return nil, fmt.Errorf("reading users named %s: %w", name, err)
	}
	if len(all) == 0 {
		return nil, nil
	}
	return &all[0], nil
}

// GetUser returns the user with ID id, nil when there is none.
func (c *Client) GetUser(ctx context.Context, id string) (*User, error) {
	var u User
	err := users.Get(ctx, c.sc, id).ExtractIntoStructPtr(&u, "user")
	if notFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading user %s: %w", id, err)
	}
	return &u, nil
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
	return c.DeleteOwnedUser(ctx, u, owner, claimUnmarked)
}

// DeleteOwnedUser deletes u, as read from Keystone, if it is owner's; one already gone
// is fine.
func (c *Client) DeleteOwnedUser(ctx context.Context, u *User, owner string, claimUnmarked bool) error {
	ownership, _ := c.classify(u.Owner, owner, claimUnmarked)
	return c.giveUpEntity(ctx, "users", u.ID, u.Owner, owner, ownership, func() error {
		return c.deleteUser(ctx, u.ID)
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
// name, each when it is want's owner's.
func (c *Client) deleteServices(ctx context.Context, knownID string, want ServiceSpec) error {
	current, err := c.findService(ctx, "", want)
	if err != nil {
		return err
	}
	for i, id := range []string{knownID, idOf(current)} {
		if i > 0 && id == knownID {
			continue
		}
		if err := c.DeleteService(ctx, id, want.Owner, want.ClaimUnmarked && id == knownID); err != nil {
			return err
		}
	}
	return nil
}

// deleteUsers deletes the user with ID userID and the one of user's name, each when it
// is user's owner's. A claim is for the user of user.Name alone: an ID read from
// elsewhere (an earlier version's annotation, which a tenant can write) never claims
// another.
func (c *Client) deleteUsers(ctx context.Context, userID string, user UserSpec) error {
	named, err := c.findUserNamed(ctx, user)
	if err != nil {
		return err
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

// EnsureRoles returns the IDs of the roles, by name, creating missing ones. Roles
// already seen by this client are not looked up again (ForgetIDs).
func (c *Client) EnsureRoles(ctx context.Context, names []string) (map[string]string, bool, error) {
	ids := map[string]string{}
	for _, name := range names {
		if id, ok := c.roleIDs.Load(name); ok {
			ids[name] = id.(string)
		}
	}
	if len(ids) == len(names) {
		return ids, false, nil
	}
	list := func() (map[string]string, error) {
		pages, err := roles.List(c.sc, roles.ListOpts{}).AllPages(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing roles: %w", err)
		}
		all, err := roles.ExtractRoles(pages)
		if err != nil {
			return nil, fmt.Errorf("reading roles: %w", err)
		}
		ids := map[string]string{}
		for _, r := range all {
			ids[r.Name] = r.ID
			c.roleIDs.Store(r.Name, r.ID)
		}
		return ids, nil
	}
	all, err := list()
	if err != nil {
		return nil, false, err
	}
	changed := false
	for _, name := range names {
		if id, ok := all[name]; ok {
			ids[name] = id
			continue
		}
		r, err := roles.Create(ctx, c.sc, roles.CreateOpts{Name: name}).Extract()
		if conflict(err) {
			if all, err = list(); err != nil {
				return nil, false, err
			}
			if all[name] == "" {
				return nil, false, fmt.Errorf("role %s conflicts but cannot be found", name)
			}
			ids[name] = all[name]
			continue
		}
		if err != nil {
			return nil, false, fmt.Errorf("creating role %s: %w", name, err)
		}
		c.roleIDs.Store(name, r.ID)
		ids[name], changed = r.ID, true
	}
	return ids, changed, nil
}

// AssignmentSpec is the roles a user has on a project.
type AssignmentSpec struct {
	UserID, ProjectID string
	RoleIDs           []string
	// Exclusive revokes the user's other roles on the project: the user is the owner's,
	// so its roles are exactly the spec's.
	Exclusive bool
	// NewUser tells that the user was created this round and has no role yet: its
	// assignments are not listed.
	NewUser bool
}

// EnsureAssignments assigns each role to the user on the project (and, with Exclusive,
// revokes the others). A 404 to an assignment is a StaleError: the role or the project
// the caller looked up earlier (EnsureRoles, EnsureProject) is gone; the cached IDs are
// dropped so that the caller can look them up again.
func (c *Client) EnsureAssignments(ctx context.Context, want AssignmentSpec) (bool, error) {
	have := map[string]bool{}
	if !want.NewUser {
		pages, err := roles.ListAssignments(c.sc, roles.ListAssignmentsOpts{UserID: want.UserID, ScopeProjectID: want.ProjectID}).AllPages(ctx)
		if err != nil {
			return false, fmt.Errorf("listing the role assignments of user %s: %w", want.UserID, err)
		}
		assigned, err := roles.ExtractRoleAssignments(pages)
		if err != nil {
			return false, fmt.Errorf("reading the role assignments of user %s: %w", want.UserID, err)
		}
		for _, a := range assigned {
			// A list by user and project holds direct assignments only (no group, no inheritance).
			if a.User.ID == want.UserID && a.Scope.Project.ID == want.ProjectID {
				have[a.Role.ID] = true
			}
		}
	}
	changed := false
	for _, id := range want.RoleIDs {
		if have[id] {
			delete(have, id)
			continue
		}
		err := roles.Assign(ctx, c.sc, id, roles.AssignOpts{UserID: want.UserID, ProjectID: want.ProjectID}).ExtractErr()
		if notFound(err) {
			c.ForgetIDs()
			return false, &StaleError{Err: fmt.Errorf("assigning role %s on project %s: %w", id, want.ProjectID, err)}
		}
		if err != nil {
			return false, fmt.Errorf("assigning role %s: %w", id, err)
		}
		changed = true
	}
	if !want.Exclusive {
		return changed, nil
	}
	for _, id := range slices.Sorted(maps.Keys(have)) {
		err := roles.Unassign(ctx, c.sc, id, roles.UnassignOpts{UserID: want.UserID, ProjectID: want.ProjectID}).ExtractErr()
		if err != nil && !notFound(err) {
			return false, fmt.Errorf("revoking role %s: %w", id, err)
		}
		changed = true
	}
	return changed, nil
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
