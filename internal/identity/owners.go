package identity

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
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

// value is o as written to Keystone: null once no owner is left. Keystone keeps an
// attribute once set (a PATCH cannot take it away), so an empty record is written as
// null, which reads as no record at all.
func (o Owners) value() any {
	if len(o) == 0 {
		return nil
	}
	return o
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
	Owner  string
	Owners Owners
}

// readOwners reads the keeper and owners of the entity id of kind ("services",
// "users") as Keystone's database has them (fresh.go); found is false when it is gone.
func (c *Client) readOwners(ctx context.Context, kind, id string) (entityOwners, bool, error) {
	if kind == "users" {
		u, err := c.GetUser(ctx, id)
		if err != nil || u == nil {
			return entityOwners{}, false, err
		}
		return entityOwners{Owner: u.Owner, Owners: u.Owners}, true, nil
	}
	svc, err := c.getService(ctx, id)
	if err != nil || svc == nil {
		return entityOwners{}, false, err
	}
	return entityOwners{Owner: svc.Owner, Owners: svc.Owners}, true, nil
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
		return departHands + OwnerName(next), map[string]any{OwnerAttribute: next, OwnersAttribute: rest.value()}
	case len(rest) < len(e.Owners):
		return departLeaves, map[string]any{OwnersAttribute: rest.value()}
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
