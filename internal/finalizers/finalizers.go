package finalizers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/keystone-stepwise/keystone-operator/internal/permissions"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// Add adds finalizer to obj when missing. It patches the finalizer list alone, with an
// optimistic lock: an Update would write the whole object as the Go type serialises it
// (empty structs included) and so change the spec of an object a user applied, and a
// patch without the lock could drop a finalizer someone added meanwhile. A conflict
// (several controllers put finalizers on one KeystoneAPI) is retried on a fresh read.
func Add(ctx context.Context, c client.Client, obj client.Object, finalizer string) error {
	return AddRecording(ctx, c, obj, finalizer, nil)
}

// AddRecording is Add that also sets annotations, in the same patch, when it adds the
// finalizer: what an object records about itself before its first write elsewhere
// costs no request of its own. An object that has the finalizer is left as it is.
func AddRecording(ctx context.Context, c client.Client, obj client.Object, finalizer string, annotations map[string]string) error {
	return change(ctx, c, obj, func(o client.Object) bool {
		if !controllerutil.AddFinalizer(o, finalizer) {
			return false
		}
		if len(annotations) > 0 {
			all := o.GetAnnotations()
			if all == nil {
				all = make(map[string]string, len(annotations))
			}
			maps.Copy(all, annotations)
			o.SetAnnotations(all)
		}
		return true
	})
}

// Remove removes the finalizers from obj where present; an object already gone is fine.
func Remove(ctx context.Context, c client.Client, obj client.Object, finalizers ...string) error {
	return client.IgnoreNotFound(change(ctx, c, obj, func(o client.Object) bool {
		removed := false
		for _, f := range finalizers {
			removed = controllerutil.RemoveFinalizer(o, f) || removed
		}
		return removed
	}))
}

// change applies edit to obj's finalizers and patches them when edit changed anything.
// An obj that was never read (no resourceVersion: only its name is known) is read first.
// Where the client's rules refuse patch on obj's kind (openstack-operator grants
// keystone-operator update, not patch, on topologies: permissions.AllowsOn), the
// finalizers are written with an update instead, without asking for the patch first;
// a patch refused all the same (rules not reviewed) is done again as an update.
func change(ctx context.Context, c client.Client, obj client.Object, edit func(client.Object) bool) error {
	first := obj.GetResourceVersion() != ""
	patch := permissions.AllowsOn(c, "patch", obj)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if !first {
			if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
				return err
			}
		}
		first = false
		base := metadataOf(obj)
		if !edit(obj) {
			return nil
		}
		if !patch {
			return updateFinalizers(ctx, c, obj)
		}
		err := patchMetadata(ctx, c, base, obj)
		if apierrors.IsForbidden(err) {
			patch = false
			err = updateFinalizers(ctx, c, obj)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("patching the finalizers of %s: %w", obj.GetName(), err)
	}
	return nil
}

// metadataOf is a copy of what change edits of obj (its finalizers and annotations),
// with what names it and the resourceVersion that locks a patch of them.
func metadataOf(obj client.Object) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: obj.GetNamespace(), Name: obj.GetName(),
		ResourceVersion: obj.GetResourceVersion(), Finalizers: slices.Clone(obj.GetFinalizers()),
		Annotations: maps.Clone(obj.GetAnnotations())}}
}

// patchMetadata patches what change edited of obj since base (finalizers, annotations)
// as a merge patch of those fields alone, locked on base's resourceVersion, and asks
// for the metadata back, not the object (the metadata client's as=PartialObjectMetadata):
// the client neither encodes nor decodes the whole object (a KeystoneAPI with its status
// and a finalizer per registration among them), and the API server does not encode it
// in its answer. Locked, the patch applied to the object as obj has it, so obj takes the
// resourceVersion, finalizers and annotations answered. Where the answer shows another
// generation (the API server changed the spec in the same write: a mutating webhook,
// pruning by the installed schema), obj keeps the version it was read at: the round's
// next locked write conflicts, and the round runs again on the object as it is now, as
// it does on a spec written meanwhile.
func patchMetadata(ctx context.Context, c client.Client, base *metav1.PartialObjectMetadata, obj client.Object) error {
	gvk, err := c.GroupVersionKindFor(obj)
	if err != nil {
		return err
	}
	edited := metadataOf(obj)
	edited.SetGroupVersionKind(gvk)
	data, err := json.Marshal(map[string]any{"metadata": metadataPatch(base, edited)})
	if err != nil {
		return err
	}
	if err := c.Patch(ctx, edited, client.RawPatch(types.MergePatchType, data)); err != nil {
		return err
	}
	if edited.Generation == obj.GetGeneration() {
		obj.SetResourceVersion(edited.ResourceVersion)
	}
	obj.SetFinalizers(edited.Finalizers)
	obj.SetAnnotations(edited.Annotations)
	return nil
}

// metadataPatch is the merge patch of the metadata that takes base's finalizers and
// annotations to edited's, with base's resourceVersion as its lock.
func metadataPatch(base, edited *metav1.PartialObjectMetadata) map[string]any {
	patch := map[string]any{"resourceVersion": base.ResourceVersion}
	if !slices.Equal(base.Finalizers, edited.Finalizers) {
		patch["finalizers"] = edited.Finalizers // the whole list (nil: none left)
	}
	annotations := map[string]any{}
	for k, v := range edited.Annotations {
		if was, ok := base.Annotations[k]; !ok || was != v {
			annotations[k] = v
		}
	}
	for k := range base.Annotations {
		if _, ok := edited.Annotations[k]; !ok {
			annotations[k] = nil
		}
	}
	if len(annotations) > 0 {
		patch["annotations"] = annotations
	}
	return patch
}

// updateFinalizers writes obj's finalizers with an update of the object as the API
// server holds it, read as unstructured: every field is kept, those the operator's Go
// type does not know included (an update of the typed object would drop them). It is
// locked on obj's resourceVersion: an object changed since obj was read conflicts, and
// change reads it again.
func updateFinalizers(ctx context.Context, c client.Client, obj client.Object) error {
	gvk, err := c.GroupVersionKindFor(obj)
	if err != nil {
		return err
	}
	current := &unstructured.Unstructured{}
	current.SetGroupVersionKind(gvk)
	// Unstructured objects are read from the API server, not the cache.
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), current); err != nil {
		return err
	}
	if current.GetResourceVersion() != obj.GetResourceVersion() {
		return apierrors.NewConflict(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, obj.GetName(),
			fmt.Errorf("changed since it was read"))
	}
	current.SetFinalizers(obj.GetFinalizers())
	current.SetAnnotations(obj.GetAnnotations())
	if err := c.Update(ctx, current); err != nil {
		return err
	}
	obj.SetResourceVersion(current.GetResourceVersion())
	return nil
}

// Holders returns the names of the objects of kind that hold a finalizer (For) on obj.
func Holders(obj client.Object, kind string) []string {
	prefix := Domain + "/" + kind + "-"
	var names []string
	for _, f := range obj.GetFinalizers() {
		if strings.HasPrefix(f, prefix) {
			names = append(names, strings.TrimPrefix(f, prefix))
		}
	}
	return names
}

// Upstream names the finalizer keystone-operator's controller of kind put on the
// objects object name used ("openstack.org/<kind>-<name>"). A drop-in replacement
// releases those too, or objects created before the switch could never be deleted.
func Upstream(kind, name string) string { return "openstack.org/" + kind + "-" + name }

// UpstreamOwn names the finalizer keystone-operator's controller of kind put on its own objects.
func UpstreamOwn(kind string) string { return "openstack.org/" + kind }

// Domain prefixes every finalizer of this suite.
const Domain = "keystone.openstack.org"

// maxNameLength is the limit of a finalizer's name part (after the domain), as of
// any qualified name.
const maxNameLength = 63

// For names the finalizer that object name of kind puts on the objects it uses,
// "keystone.openstack.org/<kind>-<name>". It stays a valid finalizer for every object
// name up to 253 characters: a name part over 63 characters keeps its start and ends
// in a digest of the whole name, so that different objects never share a finalizer.
func For(kind, name string) string {
	part := kind + "-" + name
	if len(part) > maxNameLength {
		sum := sha256.Sum256([]byte(name))
		digest := hex.EncodeToString(sum[:])[:10]
		keep := strings.TrimRight(part[:maxNameLength-len(digest)-1], "-.")
		part = keep + "-" + digest
	}
	return Domain + "/" + part
}

// Orphaned returns the finalizers that objects of kind put on holder (this suite's, For,
// and keystone-operator's, Upstream) naming none of present, the names of kind's
// objects that exist in holder's namespace: finalizers left by an object removed
// without releasing them (its own finalizer stripped by hand, or another operator's),
// which nothing would ever remove.
func Orphaned(holder client.Object, kind string, present []string) []string {
	live := map[string]bool{}
	for _, name := range present {
		live[For(kind, name)] = true
		live[Upstream(kind, name)] = true
	}
	var out []string
	for _, f := range holder.GetFinalizers() {
		ours := strings.HasPrefix(f, Domain+"/"+kind+"-")
		theirs := strings.HasPrefix(f, Upstream(kind, ""))
		if (ours || theirs) && !live[f] {
			out = append(out, f)
		}
	}
	return out
}

// ReleaseOrphaned removes from holder the finalizers objects of kind put on it (Orphaned)
// that name no object of list's type in holder's namespace, read from c and, before
// anything is removed, confirmed with uncached (the API server: a cache may not have
// seen an object created a moment ago). It returns the finalizers it removed.
func ReleaseOrphaned(ctx context.Context, c client.Client, uncached client.Reader, holder client.Object, kind string,
	list client.ObjectList) ([]string, error) {
	orphaned, err := orphanedIn(ctx, c, holder, kind, list)
	if err != nil || len(orphaned) == 0 {
		return nil, err
	}
	if orphaned, err = orphanedIn(ctx, uncached, holder, kind, list); err != nil || len(orphaned) == 0 {
		return nil, err
	}
	if err := Remove(ctx, c, holder, orphaned...); err != nil {
		return nil, err
	}
	return orphaned, nil
}

// orphanedIn is Orphaned with the names of list's objects as reader lists them.
func orphanedIn(ctx context.Context, reader client.Reader, holder client.Object, kind string, list client.ObjectList) ([]string, error) {
	l := list.DeepCopyObject().(client.ObjectList)
	if err := reader.List(ctx, l, client.InNamespace(holder.GetNamespace())); err != nil {
		return nil, fmt.Errorf("listing the %ss holding %s: %w", kind, holder.GetName(), err)
	}
	items, err := apimeta.ExtractList(l)
	if err != nil {
		return nil, fmt.Errorf("reading the %ss holding %s: %w", kind, holder.GetName(), err)
	}
	names := make([]string, 0, len(items))
	for _, item := range items {
		if o, ok := item.(client.Object); ok {
			names = append(names, o.GetName())
		}
	}
	return Orphaned(holder, kind, names), nil
}
