package identity

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/roles"
)

// EnsureRoles returns the IDs of the roles, by name, creating missing ones when create
// says so (else a MissingRolesError, nothing written). Keystone's database usually
// compares names without case: a role Keystone has under a name that differs by case
// alone is that role. Roles already seen by this client are not looked up again
// (ForgetIDs).
func (c *Client) EnsureRoles(ctx context.Context, names []string, create bool) (map[string]string, bool, error) {
	ids := map[string]string{}
	for _, name := range names {
		if id, ok := c.roleIDs.Load(name); ok {
			ids[name] = id.(string)
		}
	}
	if len(ids) == len(names) {
		return ids, false, nil
	}
	all, err := c.listRoles(ctx)
	if err != nil {
		return nil, false, err
	}
	var missing []string
	for _, name := range names {
		if id := roleID(all, name); id != "" {
			ids[name] = id
			c.roleIDs.Store(name, id)
			continue
		}
		missing = append(missing, name)
	}
	if len(missing) > 0 && !create {
		return nil, false, &MissingRolesError{Roles: missing}
	}
	changed := false
	for _, name := range missing {
		r, err := roles.Create(ctx, c.sc, roles.CreateOpts{Name: name}).Extract()
		if conflicted := err; conflict(conflicted) {
			// Created meanwhile, by another round or by hand: found now.
			if all, err = c.listRoles(ctx); err != nil {
				return nil, false, err
			}
			if ids[name] = roleID(all, name); ids[name] == "" {
				return nil, false, fmt.Errorf("creating role %s: %w, and Keystone lists no role of that name", name, conflicted)
			}
			c.roleIDs.Store(name, ids[name])
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

// listRoles lists Keystone's roles, in full (listed): ID by name.
func (c *Client) listRoles(ctx context.Context) (map[string]string, error) {
	var all []struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	if err := c.listed(ctx, "roles", nil, &all); err != nil {
		return nil, err
	}
	ids := map[string]string{}
	for _, r := range all {
		ids[r.Name] = r.ID
	}
	return ids, nil
}

// roleID is the ID of the role name among all (ID by name): of exactly that name, else
// of the first by name that differs by case alone; "" when there is none.
func roleID(all map[string]string, name string) string {
	if id, ok := all[name]; ok {
		return id
	}
	for _, other := range slices.Sorted(maps.Keys(all)) {
		if strings.EqualFold(other, name) {
			return all[other]
		}
	}
	return ""
}

// MissingRolesError tells that Keystone lacks Roles and they may not be created.
type MissingRolesError struct{ Roles []string }

func (e *MissingRolesError) Error() string {
	return fmt.Sprintf("Keystone has no role %s", strings.Join(e.Roles, ", "))
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
