package identity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/users"
)

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
	// OwnMarkOnly, in a deletion, removes the user of Name only when it carries the
	// owner's very mark (no predecessor's, none unmarked): for a name the owner's
	// KeystoneAPI no longer lets it use.
	OwnMarkOnly bool
	// Retry, when it changes, has a password Keystone refused tried again though its
	// source did not change (a digest of what a person changes of the owner,
	// reconciler.Touched: an admin who set the user's password by hand touches the
	// object); never what the owner's own writes change, or each would be one more
	// refused login towards Keystone's lockout.
	Retry string
	// Barred are the IDs of users the owner never uses (the admin users of other
	// namespaces' KeystoneAPIs): one found is refused (an AdminUserError, Other) before
	// anything is asked of it, a password check included.
	Barred map[string]bool
	// Refused is what the owner recorded of its last refused password check
	// (PasswordConflictError.Tried): that very check is not made again, also after the
	// operator restarts.
	Refused string
	// New has the user created without a look-up first (one request instead of two):
	// the owner registers it for the first time, so it is most likely not in Keystone.
	// When Keystone refuses the create (the name taken, 409; a password its rules
	// refuse), the user of that name is looked up and taken as the look-up would have
	// found it, refused or not by the same rules. Keystone has then hashed the password
	// for nothing (a fraction of a second at its default bcrypt cost), so New is for a
	// first registration alone.
	New bool
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
	u, createdID, err := c.findOrCreateUser(ctx, want)
	switch {
	case err != nil:
		return Registered{}, false, err
	case u == nil:
		return Registered{ID: createdID, Ownership: Owned, Created: true}, true, nil
	}
	ownership, claim := c.classifyUser(u, want.Owner, want.ClaimUnmarked)
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
			update[OwnersAttribute] = pruned.value()
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

// findOrCreateUser returns the user Keystone finds for want's name, refused when it is
// the client's own or found under another name (refuseUser) before anything is asked of
// it, a password check included (a failed one counts towards Keystone's lockout of that
// user); or creates it and returns its ID. want.New creates it first, and a user of that
// name is then found when Keystone refuses the create (its name taken: 409; a password
// its rules refuse, say): a refused create changes nothing, and the user is taken as the
// look-up would have found it. Neither takes a user with federated identities
// (findUser).
func (c *Client) findOrCreateUser(ctx context.Context, want UserSpec) (*User, string, error) {
	if !want.New {
		u, err := c.findUser(ctx, want.DomainID, want.Name)
		if err != nil {
			return nil, "", err
		}
		if u != nil {
			return u, "", c.refuseUserOf(u, want)
		}
	}
	created, err := c.createUser(ctx, want)
	if err == nil {
		return nil, created, nil
	}
	if !conflict(err) && !want.New {
		// Looked up already: nothing of that name to take.
		return nil, "", err
	}
	// Created since the look-up (409), or there before a create that came first.
	u, passed, lookUp := c.findUserPassing(ctx, want.DomainID, want.Name)
	switch {
	case u != nil:
		return u, "", c.refuseUserOf(u, want)
	case lookUp != nil:
		return nil, "", fmt.Errorf("%w; looking it up: %w", err, lookUp)
	case conflict(err) && passed > 0:
		return nil, "", &FederatedUserError{Name: want.Name}
	case conflict(err):
		return nil, "", fmt.Errorf("user %s conflicts but cannot be found", want.Name)
	}
	return nil, "", err
}

// createUser creates the user want names, marked with its owner and its password's
// source, and returns its ID; the error of a create Keystone refuses (conflict tells a
// name taken), which changes nothing in Keystone, whoever's user that name is.
func (c *Client) createUser(ctx context.Context, want UserSpec) (string, error) {
	enabled := true
	created, err := users.Create(ctx, c.sc, markedUser{CreateOpts: users.CreateOpts{Name: want.Name, DomainID: want.DomainID,
		DefaultProjectID: want.ProjectID, Password: want.Password, Enabled: &enabled,
		Extra: map[string]any{PasswordFromAttribute: want.PasswordFrom}}, owner: want.Owner}).Extract()
	if err != nil {
		return "", fmt.Errorf("creating user %s: %w", want.Name, err)
	}
	if s := seenFrom(ctx); s != nil && want.DomainID == defaultDomain {
		s.sawUsers([]User{{ID: created.ID, Name: want.Name, Owner: want.Owner, PasswordFrom: want.PasswordFrom}}, false)
	}
	return created.ID, nil
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
	if ownership, _ := c.classifyUser(u, owner, claimUnmarked); ownership != Owned {
		return false, nil
	}
	if len(u.Owners) == 0 {
		return true, c.mark(ctx, "users", u.ID, next)
	}
	// Other regions own it too: next keeps it among them, and records its roles itself.
	if err := c.patchEntity(ctx, "users", u.ID, map[string]any{OwnerAttribute: next,
		OwnersAttribute: u.Owners.without(func(m string) bool { return m == u.Owner }).value()}); err != nil {
		return false, fmt.Errorf("handing user %s over to %s: %w", name, next, err)
	}
	return true, nil
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

// findUser returns the user Keystone finds for name in the domain (the one of exactly
// that name first: Keystone's database may compare names loosely), nil when there is
// none, passing over users with federated identities (federated): every look-up by
// name, to use, delete, hand over or log in as a user, sees only users the operator
// may take as a service user.
func (c *Client) findUser(ctx context.Context, domainID, name string) (*User, error) {
	u, _, err := c.findUserPassing(ctx, domainID, name)
	return u, err
}

// findUserPassing is findUser, and how many users with federated identities it passed
// over.
func (c *Client) findUserPassing(ctx context.Context, domainID, name string) (*User, int, error) {
	all, err := c.listUsers(ctx, domainID, name)
	if err != nil {
		return nil, 0, err
	}
	exact := make([]*User, 0, len(all))
	var loose []*User
	for i := range all {
		if all[i].Name == name {
			exact = append(exact, &all[i])
		} else {
			loose = append(loose, &all[i])
		}
	}
	read := map[string]bool{}
	passed := 0
	for _, u := range append(exact, loose...) {
		if read[u.ID] {
			continue
		}
		read[u.ID] = true
		federated, gone, err := c.federated(ctx, u)
		switch {
		case err != nil:
			return nil, 0, err
		case federated:
			passed++
		case !gone:
			return u, passed, nil
		}
	}
	return nil, passed, nil
}

// federated tells whether u, a user a listing shows, has federated identities, and
// whether it is gone since the listing: either is passed over.
// Keystone's names are unique among its local users only, and it lists federated users
// of the name after them (keystone/identity/core.py, _handle_shadow_and_local_users): a
// shadow user, which Keystone makes at a first login through a provider, has no
// password (Keystone 22.0.2 answers a password login of it with 500: the SQL
// backend's _is_account_locked reads its local_user, which it has none of), and a
// local user given federated identities is a person's who logs in through the
// provider; neither is a service user, and the operator neither checks nor sets a
// password, a mark, roles or a deletion on one. Its create of a local user beside a
// shadow user works; beside a local one, Keystone refuses it (409). The listing does not
// show federated identities: an unmarked user with no owners of record is read by ID
// (one request more, for an adopted user or keystone-operator's at a takeover), a user
// this suite marked or joined is one it created or checked as local, and the client's
// own user is refused by its callers. Keystone may give a copy by ID that lags its
// database (fresh.go), which matters only for a user given federated identities since.
func (c *Client) federated(ctx context.Context, u *User) (federated, gone bool, err error) {
	if u.Owner != "" || len(u.Owners) > 0 || u.ID == c.UserID() {
		return false, false, nil
	}
	var read struct {
		Federated []json.RawMessage `json:"federated"`
	}
	err = users.Get(ctx, c.sc, u.ID).ExtractIntoStructPtr(&read, "user")
	switch {
	case notFound(err):
		return false, true, nil
	case err != nil:
		return false, false, fmt.Errorf("reading user %s: %w", u.ID, err)
	}
	return len(read.Federated) > 0, false, nil
}

// LookUpUser returns the user Keystone finds for name in the domain, nil when there is
// none, refusing the client's own user and a user Keystone finds under another name
// (refuseUser), and a name only users with federated identities have
// (FederatedUserError): what a namespace may name before its password is tried.
func (c *Client) LookUpUser(ctx context.Context, domainID, name string) (*User, error) {
	u, passed, err := c.findUserPassing(ctx, domainID, name)
	switch {
	case err != nil:
		return nil, err
	case u == nil && passed > 0:
		return nil, &FederatedUserError{Name: name}
	case u == nil:
		return nil, nil
	}
	return u, c.refuseUser(u, name)
}

// refuseUser refuses u, the user Keystone found for name, when it is the client's own
// user (the KeystoneAPI's admin, whatever name reached it) or when Keystone found it
// under a name that is not name but for case: Keystone's database usually compares
// names without case, and MariaDB's default collation without accents either ("àdmin"
// finds admin), so a name is checked as Keystone has it, not as it was asked for.
func (c *Client) refuseUser(u *User, name string) error {
	if self := c.UserID(); self != "" && u.ID == self {
		return &AdminUserError{Asked: name, Name: u.Name}
	}
	if !strings.EqualFold(u.Name, name) {
		return &OtherNameError{Asked: name, Name: u.Name, ID: u.ID}
	}
	return nil
}

// OtherNamespaceUser refuses u, a user an object of namespace ns is about to log in as,
// when it is another namespace's: its mark names an object of another namespace (of
// any cluster: a region's same namespace is this one), or, unmarked, objects of other
// namespaces alone are on its record as using it (Owners). A password its owner keeps
// is not this namespace's to try: each refusal would count towards Keystone's lockout
// of that user. A ForeignError naming that owner (the first by mark of those on
// record); nil when it is this namespace's, or nobody's.
func OtherNamespaceUser(u *User, ns string) error {
	if u.Owner != "" {
		if m, ok := ParseMark(u.Owner); ok && m.Namespace == ns {
			return nil
		}
		return &ForeignError{Kind: "user", Name: u.Name, Owner: u.Owner}
	}
	var other string
	for mark := range u.Owners {
		if m, ok := ParseMark(mark); ok && m.Namespace == ns {
			return nil
		}
		if other == "" || mark < other {
			other = mark
		}
	}
	if other == "" {
		return nil
	}
	return &ForeignError{Kind: "user", Name: u.Name, Owner: other, Adopter: true}
}

// refuseUserOf is refuseUser for the user want names, refusing also a user want.Barred
// holds (the admin of another namespace's KeystoneAPI: AdminUserError, Other); the
// client's own admin is refused as such first, whoever else it is the admin of.
func (c *Client) refuseUserOf(u *User, want UserSpec) error {
	if err := c.refuseUser(u, want.Name); err != nil {
		return err
	}
	if want.Barred[u.ID] {
		return &AdminUserError{Asked: want.Name, Name: u.Name, Other: true}
	}
	return nil
}

// classifyUser is classify for user u, which is never the owner's when it is the client's
// own user (the admin): whatever proof claims it, it is never marked, handed over or
// deleted.
func (c *Client) classifyUser(u *User, owner string, claimUnmarked bool) (Ownership, bool) {
	if self := c.UserID(); self != "" && u.ID == self {
		return Foreign, false
	}
	return c.classify(u.Owner, owner, claimUnmarked)
}

// AdminUserError refuses the admin's own user, the one the operator authenticates as:
// a namespace never sets its password, gives it roles, tries a password on it (each
// failure counts towards Keystone's lockout, and a locked-out admin stops the operator
// for every namespace) or deletes it.
type AdminUserError struct {
	// Asked is the name asked for, Name the admin's as Keystone has it.
	Asked, Name string
	// Other: the admin of another namespace's KeystoneAPI (UserSpec.Barred), not the
	// client's own.
	Other bool
}

// OtherAdminRefusal is why a namespace never uses the admin user of another
// namespace's KeystoneAPI, after "<what> <name> ".
const OtherAdminRefusal = "is the admin user of another namespace's KeystoneAPI, as which the operator acts for that " +
	"namespace: no other namespace uses it"

func (e *AdminUserError) Error() string {
	if e.Other {
		return "user " + e.Name + " " + OtherAdminRefusal
	}
	if e.Asked == e.Name {
		return fmt.Sprintf("user %s is Keystone's admin, as which the operator acts; a namespace never uses it", e.Name)
	}
	return fmt.Sprintf("Keystone finds user %s for the name %s: it is Keystone's admin, as which the operator acts; a namespace "+
		"never uses it", e.Name, e.Asked)
}

// FederatedUserError refuses a user name that a user with federated identities has, and
// no other user the operator may take: a person's, who logs in through an identity
// provider, never taken as a service user (findUser). Keystone refuses a local user's
// create under the name of a local user given federated identities.
type FederatedUserError struct{ Name string }

func (e *FederatedUserError) Error() string {
	return fmt.Sprintf("user %s is a user with federated identities (a person's, who logs in through an identity provider), "+
		"which is never taken as a service user; choose another name", e.Name)
}

// OtherNameError refuses a user Keystone found under another name than the one asked
// for (its database compares names without accents, or otherwise loosely).
type OtherNameError struct {
	Asked, Name, ID string
}

func (e *OtherNameError) Error() string {
	return fmt.Sprintf("Keystone finds user %s (%s) for the name %s: its database compares names loosely; name the user as "+
		"Keystone has it", e.Name, e.ID, e.Asked)
}
