package identity

import (
	"context"
	"fmt"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// What this suite creates in Keystone carries OwnerAttribute, naming its owner as
// "<Kind>/<namespace>/<name>/<uid>@<cluster>" (OwnerMark; earlier versions wrote no
// "@<cluster>"). Keystone keeps unknown attributes of services, users and endpoints and
// returns them, and the mark is set by the create request itself, so a crash between a
// create and a status write loses nothing: ownership is read from Keystone, not
// remembered. Only what its owner marked is deleted.

// ClusterConfigMap is the ConfigMap, in the operator's namespace, that keeps the
// cluster's identity once it is made (ClusterKey): the name a cluster goes by in the
// marks of what it registers in Keystone (OwnerMark).
const ClusterConfigMap = "keystone-operator-cluster-identity"

// ClusterKey is the key of ClusterConfigMap holding the identity.
const ClusterKey = "clusterID"

// OwnerMark is the mark of obj, of kind, living in cluster (the UID of its kube-system
// namespace, which names a cluster as long as it lives; "" when unknown).
func OwnerMark(kind string, obj metav1.Object, cluster string) string {
	mark := fmt.Sprintf("%s/%s/%s/%s", kind, obj.GetNamespace(), obj.GetName(), obj.GetUID())
	if cluster != "" {
		mark += "@" + cluster
	}
	return mark
}

// Mark is an owner mark read back: the object it names and its cluster ("" when the
// mark names none).
type Mark struct {
	Kind, Namespace, Name, UID, Cluster string
}

// ParseMark reads an owner mark (OwnerMark); false when mark is not one.
func ParseMark(mark string) (Mark, bool) {
	object, cluster := splitMark(mark)
	parts := strings.Split(object, "/")
	if len(parts) != 4 || parts[0] == "" || parts[3] == "" {
		return Mark{}, false
	}
	return Mark{Kind: parts[0], Namespace: parts[1], Name: parts[2], UID: parts[3], Cluster: cluster}, true
}

// OwnerName is "<Kind> <name>" of a mark, as a message names it ("" when it is none).
func OwnerName(mark string) string {
	m, ok := ParseMark(mark)
	if !ok {
		return ""
	}
	return m.Kind + " " + m.Name
}

// sameOwner tells whether mark names owner's object (its cluster aside: a mark of an
// earlier version has none). Only an object's own entities match, never a predecessor's.
func sameOwner(mark, owner string) bool {
	if owner == "" {
		return false
	}
	markObject, _ := splitMark(mark)
	ownerObject, _ := splitMark(owner)
	return markObject == ownerObject
}

// splitMark returns a mark's object part ("<Kind>/<namespace>/<name>/<uid>") and its
// cluster ("" for a mark of an earlier version, or of a cluster not known).
func splitMark(mark string) (object, cluster string) {
	object, cluster, _ = strings.Cut(mark, "@")
	return object, cluster
}

// Ownership is how an entity found in Keystone relates to an owner.
type Ownership int

const (
	// Adopted entities exist without the owner's mark (created by hand, or by someone
	// who does not mark): used, never deleted.
	Adopted Ownership = iota
	// Owned entities carry the owner's mark (or are claimed now): deleted when the owner goes.
	Owned
	// Foreign entities carry the mark of another owner.
	Foreign
	// Shared users carry the mark of another owner that the caller shares them with
	// (UserSpec.Sharing: another KeystoneService of the same namespace and cluster):
	// used, their password checked and never set, never deleted.
	Shared
	// Joined entities carry the mark of an object of the owner's kind and namespace in
	// another cluster (another region of the same control plane, sharing one Keystone):
	// the caller is one of their owners of record (OwnersAttribute); the keeper sets a
	// user's password and a service's description, the caller checks them; the entity
	// goes with its last owner.
	Joined
)

// classify returns the ownership of an entity marked mark (empty: none) for owner. An
// entity marked by an object of the owner's kind and namespace in another cluster is
// Joined: shared by the regions of one control plane.
// The owner's own mark written by an earlier version (no cluster) is claimed: the
// cluster is added to it; never taken away. An entity marked by an object of the same
// kind, namespace and name but another UID was created by that object's predecessor
// (deleted and created again, or restored from a backup) if, and only if, the mark names
// this cluster too: two clusters sharing one Keystone (two regions) both have an
// openstack/glance, and neither may take the other's. A predecessor's mark of an earlier
// version names no cluster: claimed only with unclustered (the operator's
// --claim-unclustered-marks: no two clusters shared this Keystone before the upgrade). An
// unmarked entity is claimed when claimUnmarked says it was created for this owner
// before it marked things (by keystone-operator).
func classify(mark, owner string, claimUnmarked, unclustered bool) (ownership Ownership, claim bool) {
	markObject, markCluster := splitMark(mark)
	ownerObject, ownerCluster := splitMark(owner)
	switch {
	case mark == owner:
		return Owned, false
	case mark == "" && claimUnmarked:
		return Owned, true
	case mark == "":
		return Adopted, false
	case markObject == ownerObject && ownerCluster == "" && markCluster != "":
		// Its own mark, read while the cluster's identity is unknown: kept as it is, so
		// that no failure to read it rewrites every mark (and back once it is read).
		return Owned, false
	case markObject == ownerObject, predecessor(markObject, markCluster, ownerObject, ownerCluster, unclustered):
		return Owned, true
	case coOwner(markObject, markCluster, ownerObject, ownerCluster):
		return Joined, false
	default:
		return Foreign, false
	}
}

// coOwner tells whether a mark (object, cluster) names an object of the owner's kind and
// namespace in another cluster, both clusters known: another region of the same control
// plane (its openstack namespace), which shares the entity rather than owning it alone.
func coOwner(markObject, markCluster, ownerObject, ownerCluster string) bool {
	if markCluster == "" || ownerCluster == "" || markCluster == ownerCluster {
		return false
	}
	m, ok1 := ParseMark(markObject)
	o, ok2 := ParseMark(ownerObject)
	return ok1 && ok2 && m.Kind == o.Kind && m.Namespace == o.Namespace
}

// predecessor tells whether a mark (object, cluster) is of an object of the owner's
// kind, namespace and name in the owner's cluster: naming it, or, with unclustered, an
// earlier version's mark naming none while the owner's cluster is known.
func predecessor(markObject, markCluster, ownerObject, ownerCluster string, unclustered bool) bool {
	if !sameObject(markObject, ownerObject) || ownerCluster == "" {
		return false
	}
	return markCluster == ownerCluster || (markCluster == "" && unclustered)
}

// classify is classify with the client's policy for earlier versions' marks.
func (c *Client) classify(mark, owner string, claimUnmarked bool) (Ownership, bool) {
	return classify(mark, owner, claimUnmarked, c.claimUnclustered)
}

// sameObject tells whether two owner marks name the same kind, namespace and name.
func sameObject(a, b string) bool {
	i, j := strings.LastIndex(a, "/"), strings.LastIndex(b, "/")
	return i > 0 && j > 0 && a[:i] == b[:j]
}

// ForeignError refuses to use an entity another owner registered.
type ForeignError struct {
	Kind, Name, Owner string
	// Predecessor: Owner is an earlier object of the same kind, namespace and name, by
	// an earlier version's mark (no cluster).
	Predecessor bool
	// Adopter: the entity carries no mark, and Owner is on its record as one using it
	// (Owners).
	Adopter bool
}

// foreign is the ForeignError of an entity marked mark, refused to owner.
func foreign(kind, name, mark, owner string) *ForeignError {
	markObject, markCluster := splitMark(mark)
	ownerObject, _ := splitMark(owner)
	return &ForeignError{Kind: kind, Name: name, Owner: mark, Predecessor: markCluster == "" && sameObject(markObject, ownerObject)}
}

func (e *ForeignError) Error() string {
	verb := "registered"
	if e.Adopter {
		verb = "used (unmarked, adopted)"
	}
	msg := fmt.Sprintf("%s %s is %s by %s", e.Kind, e.Name, verb, strings.Join(ownerName(e.Owner), "/"))
	if _, cluster := splitMark(e.Owner); cluster != "" {
		msg += " of the cluster " + cluster
	} else if e.Predecessor {
		msg += " with an earlier version's mark, which names no cluster (if no other cluster shared this Keystone " +
			"before the upgrade, run the operator with --claim-unclustered-marks to take over what an object of the same name left)"
	}
	return msg
}

// ownerName is "<Kind>", "<namespace>", "<name>" of a mark, without the UID and cluster.
func ownerName(mark string) []string {
	if m, ok := ParseMark(mark); ok {
		return []string{m.Kind, m.Namespace, m.Name}
	}
	object, _ := splitMark(mark)
	return strings.Split(object, "/")
}

// mark sets OwnerAttribute on an existing entity of kind ("services", "users").
func (c *Client) mark(ctx context.Context, kind, id, owner string) error {
	if err := c.patchEntity(ctx, kind, id, map[string]any{OwnerAttribute: owner}); err != nil {
		return fmt.Errorf("marking %s %s as %s's: %w", strings.TrimSuffix(kind, "s"), id, owner, err)
	}
	return nil
}

// patchEntity sets fields (attributes of Keystone's own, or extra ones such as
// OwnerAttribute) on an existing entity of kind ("services", "users") in one request.
func (c *Client) patchEntity(ctx context.Context, kind, id string, fields map[string]any) error {
	body := map[string]any{strings.TrimSuffix(kind, "s"): fields}
	_, err := c.sc.Patch(ctx, c.sc.ServiceURL(kind, id), body, nil, &gophercloud.RequestOpts{OkCodes: []int{200}})
	return err
}

// withMark adds OwnerAttribute to the entity of a create request body.
func withMark(body map[string]any, singular, owner string) (map[string]any, error) {
	if owner == "" {
		return body, nil
	}
	e, ok := body[singular].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("unexpected %s request body", singular)
	}
	e[OwnerAttribute] = owner
	return body, nil
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

// claim marks the entity id of kind, marked mark (its predecessor's, an earlier form of
// owner's, or none) and with owners of record owners, as owner's, dropping from the record
// the marks owner supersedes (mark, its predecessors').
func (c *Client) claim(ctx context.Context, kind, id, mark string, owners Owners, owner string) error {
	update := map[string]any{OwnerAttribute: owner}
	if pruned := owners.without(func(m string) bool { return m == mark || superseded(m, owner) }); len(pruned) < len(owners) {
		update[OwnersAttribute] = pruned.value()
	}
	if err := c.patchEntity(ctx, kind, id, update); err != nil {
		return fmt.Errorf("marking %s %s as %s's: %w", singular(kind), id, owner, err)
	}
	return nil
}
