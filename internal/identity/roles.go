package identity

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/roles"
)

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
