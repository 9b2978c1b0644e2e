package handback

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/keystone-stepwise/keystone-operator/internal/finalizers"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ours is the prefix of every finalizer this suite puts (finalizers.For).
const ours = finalizers.Domain + "/"

// recorded are the annotations this suite writes on objects keystone-operator also
// reads, and which keystone-operator does not know.
var recorded = []string{
	"keystone.openstack.org/service-user",
	"keystone.openstack.org/user-id",
	"keystone.openstack.org/password-set-from",
}

// kinds are the kinds whose objects carry this suite's finalizers, in the order they
// are handed back: the registrations before the KeystoneAPI they hold.
var kinds = []schema.GroupVersionKind{
	{Group: "keystone.openstack.org", Version: "v1beta1", Kind: "KeystoneEndpoint"},
	{Group: "keystone.openstack.org", Version: "v1beta1", Kind: "KeystoneService"},
	{Group: "keystone.openstack.org", Version: "v1beta1", Kind: "KeystoneApplicationCredential"},
	{Group: "keystone.openstack.org", Version: "v1beta1", Kind: "KeystoneAPI"},
	{Version: "v1", Kind: "Secret"},
	{Group: "memcached.openstack.org", Version: "v1beta1", Kind: "Memcached"},
	{Group: "mariadb.openstack.org", Version: "v1beta1", Kind: "MariaDBDatabase"},
	{Group: "mariadb.openstack.org", Version: "v1beta1", Kind: "MariaDBAccount"},
	{Group: "rabbitmq.openstack.org", Version: "v1beta1", Kind: "TransportURL"},
	{Group: "topology.openstack.org", Version: "v1beta1", Kind: "Topology"},
}

// Change is what the hand-back does to one object.
type Change struct {
	// Object is "<Kind>/<name>".
	Object string
	// Removed and Added are finalizers; Dropped are annotations.
	Removed, Added, Dropped []string
	// Stays, for a registration being deleted that loses this suite's finalizer, names
	// what it registered and leaves valid in Keystone: its deletion then ends without
	// removing it (keystone-operator takes no new finalizer on an object being deleted).
	Stays string

	obj         *unstructured.Unstructured
	finalizers  []string
	annotations map[string]string
}

func (c Change) String() string {
	var parts []string
	if len(c.Removed) > 0 {
		parts = append(parts, "remove finalizers "+strings.Join(c.Removed, ", "))
	}
	if len(c.Added) > 0 {
		parts = append(parts, "add keystone-operator's "+strings.Join(c.Added, ", "))
	}
	if len(c.Dropped) > 0 {
		parts = append(parts, "drop annotations "+strings.Join(c.Dropped, ", "))
	}
	if c.Stays != "" {
		parts = append(parts, "being deleted, it then goes without removing from Keystone "+c.Stays)
	}
	return c.Object + ": " + strings.Join(parts, "; ")
}

// Plan reads namespace ns and returns what handing it back to keystone-operator
// changes: every finalizer of this suite's removed, keystone-operator's own finalizers
// put where its controllers keep them (on objects not being deleted: the API server
// takes no new finalizer on those), and the annotations only this suite reads dropped.
// Kinds the cluster does not have are skipped. Keys, credentials, Secrets, Keystone's
// entities and every status stay as they are.
func Plan(ctx context.Context, c client.Reader, ns string) ([]Change, error) {
	objects := map[string][]unstructured.Unstructured{}
	for _, gvk := range kinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		err := c.List(ctx, list, client.InNamespace(ns))
		if apimeta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("listing %ss in %s: %w", gvk.Kind, ns, err)
		}
		objects[gvk.Kind] = list.Items
	}
	var out []Change
	for _, gvk := range kinds {
		for i := range objects[gvk.Kind] {
			obj := &objects[gvk.Kind][i]
			if ch, ok := plan(obj, objects); ok {
				out = append(out, ch)
			}
		}
	}
	return out, nil
}

// plan is the change of one object, false when there is none.
func plan(obj *unstructured.Unstructured, all map[string][]unstructured.Unstructured) (Change, bool) {
	ch := Change{Object: obj.GetKind() + "/" + obj.GetName(), obj: obj}
	had := obj.GetFinalizers()
	ourFinalizers := slices.ContainsFunc(had, func(f string) bool { return strings.HasPrefix(f, ours) })
	for _, f := range had {
		if strings.HasPrefix(f, ours) {
			ch.Removed = append(ch.Removed, f)
			continue
		}
		ch.finalizers = append(ch.finalizers, f)
	}
	if ourFinalizers && obj.GetDeletionTimestamp() == nil {
		for _, f := range upstreamFinalizers(obj, all) {
			if !slices.Contains(ch.finalizers, f) {
				ch.finalizers = append(ch.finalizers, f)
				ch.Added = append(ch.Added, f)
			}
		}
	}
	if ourFinalizers && obj.GetDeletionTimestamp() != nil {
		ch.Stays = registered(obj)
	}
	ch.annotations = obj.GetAnnotations()
	for _, a := range recorded {
		if _, ok := ch.annotations[a]; ok {
			ch.Dropped = append(ch.Dropped, a)
		}
	}
	return ch, len(ch.Removed)+len(ch.Added)+len(ch.Dropped) > 0
}

// upstreamFinalizers are the finalizers keystone-operator's controllers keep on obj,
// one of this suite's objects or one it used (read from keystone-operator's
// internal/controller and lib-common's helpers).
func upstreamFinalizers(obj *unstructured.Unstructured, all map[string][]unstructured.Unstructured) []string {
	switch obj.GetKind() {
	case "KeystoneAPI":
		// Its own, and one per registration (KeystoneService and KeystoneEndpoint).
		out := []string{finalizers.UpstreamOwn("keystoneapi")}
		for _, kind := range []string{"KeystoneService", "KeystoneEndpoint"} {
			for _, o := range live(all[kind]) {
				out = append(out, finalizers.Upstream(strings.ToLower(kind), o.GetName()))
			}
		}
		return out
	case "KeystoneService":
		// Its own, and one per KeystoneEndpoint whose serviceName names it.
		out := []string{finalizers.UpstreamOwn("keystoneservice")}
		for _, o := range live(all["KeystoneEndpoint"]) {
			if name, _, _ := unstructured.NestedString(o.Object, "spec", "serviceName"); name == obj.GetName() {
				out = append(out, finalizers.Upstream("keystoneendpoint", o.GetName()))
			}
		}
		return out
	case "KeystoneEndpoint":
		return []string{finalizers.UpstreamOwn("keystoneendpoint")}
	case "KeystoneApplicationCredential":
		return []string{finalizers.UpstreamOwn("applicationcredential")}
	case "Secret":
		if slices.Contains(obj.GetFinalizers(), ours+"ac-secret-protection") {
			return []string{finalizers.UpstreamOwn("ac-secret-protection")}
		}
	case "Memcached", "MariaDBDatabase", "MariaDBAccount":
		return []string{finalizers.UpstreamOwn("keystoneapi")}
	case "Topology":
		// lib-common's EnsureTopologyRef: "<helper's finalizer>-<KeystoneAPI name>".
		var out []string
		for _, f := range obj.GetFinalizers() {
			if api, ok := strings.CutPrefix(f, ours+"keystoneapi-"); ok {
				out = append(out, finalizers.Upstream("keystoneapi", api))
			}
		}
		return out
	}
	return nil
}

// registered names what a registration's status says it registered in Keystone; "" for
// other kinds, or when it says nothing.
func registered(obj *unstructured.Unstructured) string {
	field := func(path ...string) string {
		v, _, _ := unstructured.NestedString(obj.Object, append([]string{"status"}, path...)...)
		return v
	}
	switch obj.GetKind() {
	case "KeystoneService":
		var parts []string
		if id := field("serviceID"); id != "" {
			parts = append(parts, "service "+id)
		}
		if user, _, _ := unstructured.NestedString(obj.Object, "spec", "serviceUser"); user != "" {
			parts = append(parts, "user "+user)
		}
		return strings.Join(parts, " and ")
	case "KeystoneEndpoint":
		ids, _, _ := unstructured.NestedStringMap(obj.Object, "status", "endpointIDs")
		if len(ids) == 0 {
			return ""
		}
		var parts []string
		for _, iface := range slices.Sorted(maps.Keys(ids)) {
			parts = append(parts, iface+" "+ids[iface])
		}
		return "endpoints " + strings.Join(parts, ", ")
	case "KeystoneApplicationCredential":
		if id := field("acID"); id != "" {
			return "application credential " + id
		}
	}
	return ""
}

// live are the objects not being deleted, by name.
func live(objs []unstructured.Unstructured) []unstructured.Unstructured {
	var out []unstructured.Unstructured
	for _, o := range objs {
		if o.GetDeletionTimestamp() == nil {
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetName() < out[j].GetName() })
	return out
}

// Apply makes each change, with an optimistic lock: an object changed since Plan read
// it is refused (run the hand-back again).
func Apply(ctx context.Context, c client.Client, changes []Change) error {
	for _, ch := range changes {
		base := ch.obj.DeepCopy()
		obj := ch.obj.DeepCopy()
		obj.SetFinalizers(ch.finalizers)
		if len(ch.Dropped) > 0 {
			annotations := map[string]string{}
			for k, v := range ch.annotations {
				if !slices.Contains(ch.Dropped, k) {
					annotations[k] = v
				}
			}
			obj.SetAnnotations(annotations)
		}
		if err := c.Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
			return fmt.Errorf("%s: %w", ch.Object, err)
		}
	}
	return nil
}
