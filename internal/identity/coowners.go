package identity

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/endpoints"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/services"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/users"
)

// OwnersAttribute lists, on a service or user that the control planes of several
// clusters register (one region each, sharing one Keystone), its owners of record and
// what each asks of it (a user's roles; nothing of a service): kept in Keystone itself,
// so that none depends on one cluster, and an admin can release a cluster gone for good
// from Keystone alone (ReleaseCluster). OwnerAttribute names the keeper among them: the
// one that created the entity, or the one it was handed to, which alone sets a user's
// password and a service's description; the others join (Joined) and check.
const OwnersAttribute = "keystone_operator_owners"

// Owners are an entity's owners of record other than, or besides, its keeper: mark ->
// the roles it asks for, sorted.
type Owners map[string][]string

// others are the owners of record but mark, each once, the keeper first, the rest by mark.
func (o Owners) others(keeper, mark string) []string {
	var out []string
	if keeper != "" && keeper != mark {
		out = append(out, keeper)
	}
	for _, m := range slices.Sorted(maps.Keys(o)) {
		if m != mark && m != keeper {
			out = append(out, m)
		}
	}
	return out
}

// with returns a copy of o with mark asking for roles.
func (o Owners) with(mark string, roles []string) Owners {
	out := maps.Clone(o)
	if out == nil {
		out = Owners{}
	}
	roles = slices.Clone(roles)
	sort.Strings(roles)
	if roles == nil {
		roles = []string{}
	}
	out[mark] = roles
	return out
}

// without returns a copy of o without mark.
func (o Owners) without(mark string) Owners {
	out := maps.Clone(o)
	delete(out, mark)
	return out
}

// has tells whether o lists mark asking for exactly roles.
func (o Owners) has(mark string, roles []string) bool {
	have, ok := o[mark]
	want := slices.Clone(roles)
	sort.Strings(want)
	return ok && slices.Equal(have, want) || ok && len(have) == 0 && len(want) == 0
}

// Roles is the union of the roles every owner of record asks for.
func (o Owners) Roles() []string {
	var out []string
	for _, roles := range o {
		for _, r := range roles {
			if !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	sort.Strings(out)
	return out
}

// entityOwners is what co-ownership reads of a service or user: its keeper and owners.
type entityOwners struct {
	Owner  string `json:"keystone_operator_owner"`
	Owners Owners `json:"keystone_operator_owners"`
}

// readOwners reads the keeper and owners of the entity id of kind ("services",
// "users"); found is false when it is gone.
func (c *Client) readOwners(ctx context.Context, kind, id string) (entityOwners, bool, error) {
	var got map[string]entityOwners
	singular := strings.TrimSuffix(kind, "s")
	resp, err := c.sc.Get(ctx, c.sc.ServiceURL(kind, id), &got, nil)
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
	if notFound(err) {
		return entityOwners{}, false, nil
	}
	if err != nil {
		return entityOwners{}, false, fmt.Errorf("reading %s %s: %w", singular, id, err)
	}
	return got[singular], true, nil
}

// settleAttempts bounds how often a co-owner writes and reads back its owners of record:
// Keystone has no optimistic lock, so two regions writing at once may each lose the
// other's write, which the read back finds and writes again.
const settleAttempts = 5

// join records mark as an owner of record of the entity id of kind, asking for roles,
// and reads it back until it holds (another region's write at the same moment may have
// dropped it). It tells whether it wrote.
func (c *Client) join(ctx context.Context, kind, id, mark string, roles []string) (bool, error) {
	wrote := false
	for range settleAttempts {
		e, found, err := c.readOwners(ctx, kind, id)
		if err != nil || !found {
			return wrote, err
		}
		if e.Owners.has(mark, roles) {
			return wrote, nil
		}
		if err := c.patchEntity(ctx, kind, id, map[string]any{OwnersAttribute: e.Owners.with(mark, roles)}); err != nil {
			return wrote, fmt.Errorf("joining %s %s as %s: %w", strings.TrimSuffix(kind, "s"), id, mark, err)
		}
		wrote = true
	}
	return wrote, fmt.Errorf("joining %s %s as %s: other owners kept writing; tried %d times", strings.TrimSuffix(kind, "s"), id, mark, settleAttempts)
}

// leave takes mark out of the owners of the entity id of kind: a co-owner leaves the
// owners of record; the keeper hands the entity to the first other owner (the entity
// outlives it); the last owner deletes it (remove). It reads back until mark is neither
// keeper nor listed, as join does. It tells whether the entity is gone (or was).
func (c *Client) leave(ctx context.Context, kind, id, mark string, remove func() error) (bool, error) {
	for range settleAttempts {
		e, found, err := c.readOwners(ctx, kind, id)
		if err != nil || !found {
			return !found, err
		}
		_, listed := e.Owners[mark]
		others := e.Owners.others(e.Owner, mark)
		switch {
		case e.Owner == mark && len(others) == 0:
			return true, remove()
		case e.Owner == mark:
			next := others[0]
			err = c.patchEntity(ctx, kind, id, map[string]any{OwnerAttribute: next, OwnersAttribute: e.Owners.without(mark)})
		case listed:
			err = c.patchEntity(ctx, kind, id, map[string]any{OwnersAttribute: e.Owners.without(mark)})
		default:
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("leaving %s %s as %s: %w", strings.TrimSuffix(kind, "s"), id, mark, err)
		}
	}
	return false, fmt.Errorf("leaving %s %s as %s: other owners kept writing; tried %d times", strings.TrimSuffix(kind, "s"), id, mark, settleAttempts)
}

// Release is what releasing a cluster does to one entity (ReleaseCluster).
type Release struct {
	// Entity is "<kind> <name or URL> (<ID>)".
	Entity string
	// Action says what is done: "leaves the owners", "handed to <owner>", "deleted".
	Action string
}

// ReleaseCluster takes cluster, a cluster gone for good, out of every service, user and
// endpoint of Keystone it registered: it leaves the owners of record where other regions
// own the entity too (a keeper hands it to the next owner), and its own alone (its
// endpoints, a service or user no other region owns) are deleted, as its deletion would
// have. With apply false it only says what it would do. It never touches what carries
// no mark of cluster.
func (c *Client) ReleaseCluster(ctx context.Context, cluster string, apply bool) ([]Release, error) {
	if cluster == "" {
		return nil, fmt.Errorf("releasing a cluster needs its identity")
	}
	all, err := c.listAll(ctx)
	if err != nil {
		return nil, err
	}
	r := releaser{c: c, cluster: cluster, apply: apply}
	for _, e := range all.endpoints {
		if err := r.endpoint(ctx, e); err != nil {
			return r.out, err
		}
	}
	for _, s := range all.services {
		if err := r.entity(ctx, "services", s.Type+"/"+s.Name, s.ID, s.Owner, s.Owners, func() error { return c.deleteService(ctx, s.ID) }); err != nil {
			return r.out, err
		}
	}
	for _, u := range all.users {
		if err := r.entity(ctx, "users", u.Name, u.ID, u.Owner, u.Owners, func() error { return c.deleteUser(ctx, u.ID) }); err != nil {
			return r.out, err
		}
	}
	return r.out, nil
}

// releaser is one ReleaseCluster: what it has done, or would do.
type releaser struct {
	c       *Client
	cluster string
	apply   bool
	out     []Release
}

// ofCluster tells whether mark names an object of the cluster released.
func (r *releaser) ofCluster(mark string) bool {
	_, cl := splitMark(mark)
	return cl == r.cluster
}

// endpoint deletes e when the cluster registered it.
func (r *releaser) endpoint(ctx context.Context, e Endpoint) error {
	if !r.ofCluster(e.Owner) {
		return nil
	}
	r.out = append(r.out, Release{Entity: fmt.Sprintf("endpoint %s %s in %s (%s)", e.Interface, e.URL, e.region(), e.ID), Action: "deleted"})
	if !r.apply {
		return nil
	}
	return r.c.deleteEndpoint(ctx, e.ID)
}

// entity takes the cluster's marks out of the owners of the entity id of kind (keeper
// keeper, owners of record owners): the entity is left to the other owners, or, the
// cluster's alone, removed.
func (r *releaser) entity(ctx context.Context, kind, label, id, keeper string, owners Owners, remove func() error) error {
	var marks []string
	if r.ofCluster(keeper) {
		marks = append(marks, keeper)
	}
	for m := range owners {
		if r.ofCluster(m) && m != keeper {
			marks = append(marks, m)
		}
	}
	if len(marks) == 0 {
		return nil
	}
	var rest []string
	for _, m := range owners.others(keeper, "") {
		if !r.ofCluster(m) {
			rest = append(rest, m)
		}
	}
	action := "leaves the owners"
	switch {
	case len(rest) == 0:
		action = "deleted"
	case r.ofCluster(keeper):
		action = "handed to " + OwnerName(rest[0])
	}
	r.out = append(r.out, Release{Entity: fmt.Sprintf("%s %s (%s)", strings.TrimSuffix(kind, "s"), label, id), Action: action})
	if !r.apply {
		return nil
	}
	for _, m := range marks {
		if _, err := r.c.leave(ctx, kind, id, m, remove); err != nil {
			return err
		}
	}
	return nil
}

// everything is every service, user of the default domain and endpoint of Keystone.
type everything struct {
	services  []Service
	users     []User
	endpoints []Endpoint
}

// listAll lists everything ReleaseCluster looks at.
func (c *Client) listAll(ctx context.Context) (everything, error) {
	var all everything
	for _, l := range []struct {
		path string
		key  string
		into any
	}{
		{c.sc.ServiceURL("services"), "services", &all.services},
		{c.sc.ServiceURL("users") + "?domain_id=default", "users", &all.users},
		{c.sc.ServiceURL("endpoints"), "endpoints", &all.endpoints},
	} {
		body := map[string]json.RawMessage{}
		resp, err := c.sc.Get(ctx, l.path, &body, nil)
		if resp != nil && resp.Body != nil {
			_ = resp.Body.Close()
		}
		if err != nil {
			return everything{}, fmt.Errorf("listing %s: %w", l.key, err)
		}
		if err := json.Unmarshal(body[l.key], l.into); err != nil {
			return everything{}, fmt.Errorf("reading %s: %w", l.key, err)
		}
	}
	return all, nil
}

// deleteService deletes the service id; one already gone is fine.
func (c *Client) deleteService(ctx context.Context, id string) error {
	if err := services.Delete(ctx, c.sc, id).ExtractErr(); err != nil && !notFound(err) {
		return fmt.Errorf("deleting service %s: %w", id, err)
	}
	return nil
}

// deleteUser deletes the user id; one already gone is fine.
func (c *Client) deleteUser(ctx context.Context, id string) error {
	if err := users.Delete(ctx, c.sc, id).ExtractErr(); err != nil && !notFound(err) {
		return fmt.Errorf("deleting user %s: %w", id, err)
	}
	return nil
}

// deleteEndpoint deletes the endpoint id; one already gone is fine.
func (c *Client) deleteEndpoint(ctx context.Context, id string) error {
	if err := endpoints.Delete(ctx, c.sc, id).ExtractErr(); err != nil && !notFound(err) {
		return fmt.Errorf("deleting endpoint %s: %w", id, err)
	}
	return nil
}
