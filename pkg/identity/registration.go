package identity

import (
	"context"
	"fmt"
	"slices"
	"sort"

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
}

// EnsureService finds the service by ID (when known) or by type and name, creating
// it when missing (an existing one is adopted), and updates description and enabled.
func (c *Client) EnsureService(ctx context.Context, knownID string, want ServiceSpec) (id string, changed bool, err error) {
	svc, err := c.findService(ctx, knownID, want)
	if err != nil {
		return "", false, err
	}
	if svc == nil {
		created, err := services.Create(ctx, c.sc, services.CreateOpts{Type: want.Type, Name: want.Name,
			Description: want.Description, Enabled: &want.Enabled}).Extract()
		if conflict(err) {
			if svc, err = c.findService(ctx, "", want); err == nil && svc == nil {
				err = fmt.Errorf("service %s/%s conflicts but cannot be found", want.Type, want.Name)
			}
		}
		if err != nil {
			return "", false, fmt.Errorf("creating service %s/%s: %w", want.Type, want.Name, err)
		}
		if svc == nil {
			return created.ID, true, nil
		}
	}
	if svc.Description == want.Description && svc.Enabled == want.Enabled {
		return svc.ID, false, nil
	}
	if _, err := services.Update(ctx, c.sc, svc.ID, services.UpdateOpts{Description: &want.Description,
		Enabled: &want.Enabled}).Extract(); err != nil {
		return "", false, fmt.Errorf("updating service %s: %w", svc.ID, err)
	}
	return svc.ID, true, nil
}

func (c *Client) findService(ctx context.Context, knownID string, want ServiceSpec) (*services.Service, error) {
	if knownID != "" {
		svc, err := services.Get(ctx, c.sc, knownID).Extract()
		if err == nil && svc.Type == want.Type && svc.Name == want.Name {
			return svc, nil
		}
		if err != nil && !notFound(err) {
			return nil, fmt.Errorf("reading service %s: %w", knownID, err)
		}
	}
	pages, err := services.List(c.sc, services.ListOpts{ServiceType: want.Type, Name: want.Name}).AllPages(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing services of type %s: %w", want.Type, err)
	}
	all, err := services.ExtractServices(pages)
	if err != nil {
		return nil, fmt.Errorf("reading services of type %s: %w", want.Type, err)
	}
	var found []services.Service
	for _, s := range all {
		if s.Type == want.Type && s.Name == want.Name {
			found = append(found, s)
		}
	}
	if len(found) == 0 {
		return nil, nil
	}
	sort.Slice(found, func(i, j int) bool { return found[i].ID < found[j].ID })
	return &found[0], nil
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

// UserSpec is a service user.
type UserSpec struct {
	Name, DomainID, ProjectID, Password string
	// SetPassword updates the password of an existing user.
	SetPassword bool
}

// EnsureUser returns the ID of the user, creating it with its password when missing,
// and setting the password when asked.
func (c *Client) EnsureUser(ctx context.Context, want UserSpec) (string, bool, error) {
	find := func() (*users.User, error) {
		pages, err := users.List(c.sc, users.ListOpts{DomainID: want.DomainID, Name: want.Name}).AllPages(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing users named %s: %w", want.Name, err)
		}
		all, err := users.ExtractUsers(pages)
		if err != nil || len(all) == 0 {
			return nil, err
		}
		return &all[0], nil
	}
	u, err := find()
	if err != nil {
		return "", false, err
	}
	if u == nil {
		enabled := true
		created, err := users.Create(ctx, c.sc, users.CreateOpts{Name: want.Name, DomainID: want.DomainID,
			DefaultProjectID: want.ProjectID, Password: want.Password, Enabled: &enabled}).Extract()
		if !conflict(err) {
			if err != nil {
				return "", false, fmt.Errorf("creating user %s: %w", want.Name, err)
			}
			return created.ID, true, nil
		}
		if u, err = find(); err != nil || u == nil {
			return "", false, fmt.Errorf("user %s conflicts but cannot be found: %w", want.Name, err)
		}
		want.SetPassword = true
	}
	if !want.SetPassword {
		return u.ID, false, nil
	}
	if _, err := users.Update(ctx, c.sc, u.ID, users.UpdateOpts{Password: want.Password}).Extract(); err != nil {
		return "", false, fmt.Errorf("setting the password of user %s: %w", want.Name, err)
	}
	return u.ID, true, nil
}

// EnsureRoles returns the IDs of the roles, by name, creating missing ones.
func (c *Client) EnsureRoles(ctx context.Context, names []string) (map[string]string, bool, error) {
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
		}
		return ids, nil
	}
	all, err := list()
	if err != nil {
		return nil, false, err
	}
	ids := map[string]string{}
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
		ids[name], changed = r.ID, true
	}
	return ids, changed, nil
}

// EnsureAssignments assigns each role to the user on the project.
func (c *Client) EnsureAssignments(ctx context.Context, userID, projectID string, roleIDs []string) (bool, error) {
	pages, err := roles.ListAssignments(c.sc, roles.ListAssignmentsOpts{UserID: userID, ScopeProjectID: projectID}).AllPages(ctx)
	if err != nil {
		return false, fmt.Errorf("listing the role assignments of user %s: %w", userID, err)
	}
	assigned, err := roles.ExtractRoleAssignments(pages)
	if err != nil {
		return false, fmt.Errorf("reading the role assignments of user %s: %w", userID, err)
	}
	have := map[string]bool{}
	for _, a := range assigned {
		have[a.Role.ID] = true
	}
	changed := false
	for _, id := range roleIDs {
		if have[id] {
			continue
		}
		if err := roles.Assign(ctx, c.sc, id, roles.AssignOpts{UserID: userID, ProjectID: projectID}).ExtractErr(); err != nil {
			return false, fmt.Errorf("assigning role %s: %w", id, err)
		}
		changed = true
	}
	return changed, nil
}

// DeleteRegistration deletes the service (Keystone deletes its endpoints with it) and
// the user; what is already gone is fine.
func (c *Client) DeleteRegistration(ctx context.Context, serviceID string, want ServiceSpec, user UserSpec) error {
	svc, err := c.findService(ctx, serviceID, want)
	if err != nil {
		return err
	}
	if svc != nil {
		if err := services.Delete(ctx, c.sc, svc.ID).ExtractErr(); err != nil && !notFound(err) {
			return fmt.Errorf("deleting service %s: %w", svc.ID, err)
		}
	}
	pages, err := users.List(c.sc, users.ListOpts{DomainID: user.DomainID, Name: user.Name}).AllPages(ctx)
	if err != nil {
		return fmt.Errorf("listing users named %s: %w", user.Name, err)
	}
	all, err := users.ExtractUsers(pages)
	if err != nil {
		return fmt.Errorf("reading users named %s: %w", user.Name, err)
	}
	for _, u := range all {
		if err := users.Delete(ctx, c.sc, u.ID).ExtractErr(); err != nil && !notFound(err) {
			return fmt.Errorf("deleting user %s: %w", u.Name, err)
		}
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
