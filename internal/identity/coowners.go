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

// with returns a copy of o with mark asking for roles, without the marks it supersedes:
// drop (a keeper's earlier mark, on a claim) and its predecessors' (superseded).
func (o Owners) with(mark string, roles []string, drop string) Owners {
	out := Owners{}
	for m, r := range o {
		if m != drop && !superseded(m, mark) {
			out[m] = r
		}
	}
	out[mark] = sortedRoles(roles)
	return out
}

// without returns a copy of o without the marks leaving names.
func (o Owners) without(leaving func(string) bool) Owners {
	out := Owners{}
	for m, r := range o {
		if !leaving(m) {
			out[m] = r
		}
	}
	return out
}

// has tells whether o lists mark asking for exactly roles, and no mark it supersedes
// (drop, a predecessor's).
func (o Owners) has(mark string, roles []string, drop string) bool {
	have, ok := o[mark]
	if !ok || !slices.Equal(have, sortedRoles(roles)) {
		return false
	}
	for m := range o {
		if m == drop || superseded(m, mark) {
			return false
		}
	}
	return true
}

// sortedRoles is roles sorted, never nil (an owner asking for none is still listed).
func sortedRoles(roles []string) []string {
	out := slices.Clone(roles)
	sort.Strings(out)
	if out == nil {
		out = []string{}
	}
	return out
}

// superseded tells whether m is the mark of a predecessor of mark's object: the same
// kind, namespace and name in the same known cluster, another UID (deleted and created
// again: both cannot live at once).
func superseded(m, mark string) bool {
	if m == mark {
		return false
	}
	mObject, mCluster := splitMark(m)
	object, cluster := splitMark(mark)
	return cluster != "" && mCluster == cluster && sameObject(mObject, object)
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
	resp, err := c.sc.Get(ctx, c.sc.ServiceURL(kind, id), &got, nil)
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
	if notFound(err) {
		return entityOwners{}, false, nil
	}
	if err != nil {
		return entityOwners{}, false, fmt.Errorf("reading %s %s: %w", singular(kind), id, err)
	}
	return got[singular(kind)], true, nil
}

// settleAttempts bounds how often a co-owner writes and reads back its owners of record.
const settleAttempts = 5

// join records mark as an owner of record of the entity id of kind, asking for roles,
// dropping what it supersedes (drop, predecessors' marks), and reads it back, writing
// again while it does not hold. Keystone has no conditional update: a region writing
// the same entity's record at the same moment, after this read back, may still drop
// this entry; each owner looks again every recheck (the KeystoneService controller's
// --region-recheck) and records itself again. It tells whether it wrote; an entity gone
// meanwhile is an error (the next round finds, or creates, it again).
func (c *Client) join(ctx context.Context, kind, id, mark string, roles []string, drop string) (bool, error) {
	wrote := false
	for range settleAttempts {
		e, found, err := c.readOwners(ctx, kind, id)
		switch {
		case err != nil:
			return wrote, err
		case !found:
			return wrote, fmt.Errorf("joining %s %s as %s: it was deleted meanwhile", singular(kind), id, mark)
		case e.Owners.has(mark, roles, drop):
			return wrote, nil
		}
		if err := c.patchEntity(ctx, kind, id, map[string]any{OwnersAttribute: e.Owners.with(mark, roles, drop)}); err != nil {
			return wrote, fmt.Errorf("joining %s %s as %s: %w", singular(kind), id, mark, err)
		}
		wrote = true
	}
	return wrote, fmt.Errorf("joining %s %s as %s: other owners kept writing; tried %d times", singular(kind), id, mark, settleAttempts)
}

// What depart does to an entity.
const (
	departLeaves  = "leaves the owners"
	departDeletes = "deleted"
	departHands   = "handed to "
)

// departure is what depart does to an entity's record.
type departure struct {
	// leaving tells the marks that leave.
	leaving func(string) bool
	// ref is the mark whose kind and namespace a successor shares ("": the keeper's).
	ref string
	// remove deletes the entity when its keeper leaves and no successor is left; nil
	// when the keeper never leaves by this departure (forget).
	remove func() error
	// apply: without it, depart only says what it would do.
	apply bool
}

// depart takes the owners d.leaving names out of the entity id of kind, as read now:
// the owners of record leaving go from the record; a keeper leaving hands the entity to
// its successor, or, none left, removes it (d.remove). An entity no owner of which
// leaves is left as it is; an unmarked one is removed only when d.leaving says ""
// leaves (its owner claims it, on keystone-operator's proof). It reads back until none
// leaving is keeper or listed, and reads once more right before a removal (Keystone has
// no conditional delete: a region recording itself between that read and the delete
// loses the entity, and sees so at its next look). It returns what it did ("" for
// nothing), and with d.apply false does nothing but say it.
func (c *Client) depart(ctx context.Context, kind, id string, d departure) (string, error) {
	did := ""
	for range settleAttempts {
		e, found, err := c.readOwners(ctx, kind, id)
		if err != nil || !found {
			return did, err
		}
		action, update := d.plan(e)
		switch {
		case action == "":
			return did, nil
		case !d.apply:
			return action, nil
		case action == departDeletes:
			if again, found, err := c.readOwners(ctx, kind, id); err != nil || !found || !sameRecord(again, e) {
				continue // gone, unreadable (said on the next try) or changed meanwhile: decided again
			}
			return action, d.remove()
		}
		if err := c.patchEntity(ctx, kind, id, update); err != nil {
			return did, fmt.Errorf("%s %s: %s: %w", singular(kind), id, action, err)
		}
		did = action
	}
	return did, fmt.Errorf("%s %s: owners leaving: other owners kept writing; tried %d times", singular(kind), id, settleAttempts)
}

// plan is what d does to an entity recorded as e: the action ("" for none) and, but
// for a removal, the update of its record.
func (d departure) plan(e entityOwners) (string, map[string]any) {
	keeperLeaves := d.remove != nil && d.leaving(e.Owner)
	rest := e.Owners.without(d.leaving)
	ref := d.ref
	if ref == "" {
		ref = e.Owner
	}
	next, ok := successor(ref, rest)
	switch {
	case keeperLeaves && !ok:
		return departDeletes, nil
	case keeperLeaves:
		return departHands + OwnerName(next), map[string]any{OwnerAttribute: next, OwnersAttribute: rest}
	case len(rest) < len(e.Owners):
		return departLeaves, map[string]any{OwnersAttribute: rest}
	}
	return "", nil
}

// sameRecord tells whether two reads of an entity's record agree.
func sameRecord(a, b entityOwners) bool {
	return a.Owner == b.Owner && record(a.Owner, a.Owners, "") == record(b.Owner, b.Owners, "")
}

// successor is who keeps an entity whose keeper leaves, among the owners left (rest):
// the first by mark of those that could have joined ref, the leaving keeper (an object
// of its kind and namespace in another known cluster: another region; coOwner), all of
// which proved the password or the definition before they were recorded. Another
// namespace's record (an adopter of an unmarked entity) never keeps it. False when none
// is left.
func successor(ref string, rest Owners) (string, bool) {
	refObject, refCluster := splitMark(ref)
	for _, m := range slices.Sorted(maps.Keys(rest)) {
		object, cluster := splitMark(m)
		if coOwner(object, cluster, refObject, refCluster) {
			return m, true
		}
	}
	return "", false
}

// coOwners are the owners of record in o that could have joined owner's entity: objects
// of its kind and namespace in other known clusters (coOwner), with what they ask for.
func (o Owners) coOwners(owner string) Owners {
	ownerObject, ownerCluster := splitMark(owner)
	out := Owners{}
	for m, roles := range o {
		if object, cluster := splitMark(m); coOwner(object, cluster, ownerObject, ownerCluster) {
			out[m] = roles
		}
	}
	return out
}

// forget takes mark, and its predecessors' marks, out of the owners of record of the
// entity id of kind: a joiner or adopter whose password or definition no longer holds
// keeps nothing it has not proved, and an object refused it (another's) or sharing it
// within its cluster stays on no record. The keeper is never touched: a mark that is the
// keeper now (handed over meanwhile) is for the next round, which sees it Owned.
func (c *Client) forget(ctx context.Context, kind, id, mark string) error {
	_, err := c.depart(ctx, kind, id, departure{leaving: func(m string) bool { return m == mark || superseded(m, mark) }, apply: true})
	return err
}

// recorded tells whether owners list mark or one of its predecessors' marks.
func (o Owners) recorded(mark string) bool {
	for m := range o {
		if m == mark || superseded(m, mark) {
			return true
		}
	}
	return false
}

// singular is "service", "user" of a kind of path ("services", "users").
func singular(kind string) string { return strings.TrimSuffix(kind, "s") }

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
		if err := r.entity(ctx, "services", s.Type+"/"+s.Name, s.ID, func() error { return c.deleteService(ctx, s.ID) }); err != nil {
			return r.out, err
		}
	}
	for _, u := range all.users {
		if err := r.entity(ctx, "users", u.Name, u.ID, func() error { return c.deleteUser(ctx, u.ID) }); err != nil {
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

// entity takes the cluster's marks out of the entity id of kind (depart): left to the
// other owners, or, the cluster's alone, removed.
func (r *releaser) entity(ctx context.Context, kind, label, id string, remove func() error) error {
	action, err := r.c.depart(ctx, kind, id, departure{leaving: r.ofCluster, remove: remove, apply: r.apply})
	if action != "" {
		r.out = append(r.out, Release{Entity: fmt.Sprintf("%s %s (%s)", singular(kind), label, id), Action: action})
	}
	return err
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
	err := c.list(ctx, &all, "services", "users", "endpoints")
	return all, err
}

// list fills all with the kinds ("services", "users" of the default domain,
// "endpoints") listed in full: a list Keystone's list_limit truncated is an error.
func (c *Client) list(ctx context.Context, all *everything, kinds ...string) error {
	for _, kind := range kinds {
		path, into := c.sc.ServiceURL(kind), any(nil)
		switch kind {
		case "services":
			into = &all.services
		case "users":
			path, into = path+"?domain_id=default", &all.users
		case "endpoints":
			into = &all.endpoints
		}
		body := map[string]json.RawMessage{}
		resp, err := c.sc.Get(ctx, path, &body, nil)
		if resp != nil && resp.Body != nil {
			_ = resp.Body.Close()
		}
		if err != nil {
			return fmt.Errorf("listing %s: %w", kind, err)
		}
		// Keystone's list_limit cuts a list short and says so: acting on part of it
		// would leave the rest behind, unsaid.
		if string(body["truncated"]) == "true" {
			return fmt.Errorf("listing %s: Keystone truncated the list (its list_limit); raise it", kind)
		}
		if err := json.Unmarshal(body[kind], into); err != nil {
			return fmt.Errorf("reading %s: %w", kind, err)
		}
	}
	return nil
}

// Records are the co-owners' records of Keystone's services (by type and name,
// "service/<type>/<name>": several of one type and name in ID order) and of its users of
// the default domain (by name, "user/<name>"): each entity's keeper, owners of record
// and, of a service, its definition (description, enabled), of a user, its password's
// source, as one comparable string. Two listings: what an operator compares between two
// looks to see what another cluster changed (Keystone has no watch).
func (c *Client) Records(ctx context.Context) (map[string]string, error) {
	var all everything
	if err := c.list(ctx, &all, "services", "users"); err != nil {
		return nil, err
	}
	slices.SortFunc(all.services, func(a, b Service) int { return strings.Compare(a.ID, b.ID) })
	out := make(map[string]string, len(all.services)+len(all.users))
	for _, s := range all.services {
		key := "service/" + s.Type + "/" + s.Name
		out[key] += record(s.Owner, s.Owners, fmt.Sprintf("%s %q %t", s.ID, s.Description, s.Enabled)) + "\n"
	}
	for _, u := range all.users {
		out["user/"+u.Name] = record(u.Owner, u.Owners, u.PasswordFrom)
	}
	return out, nil
}

// record is an entity's keeper, owners of record and what else tells a change (a
// service's definition, a user's password source) as one string.
func record(keeper string, owners Owners, more string) string {
	recorded, _ := json.Marshal(owners) // a map of strings: keys sorted, never an error
	return keeper + " " + string(recorded) + " " + more
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
