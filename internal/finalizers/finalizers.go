package finalizers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
func change(ctx context.Context, c client.Client, obj client.Object, edit func(client.Object) bool) error {
	first := obj.GetResourceVersion() != ""
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if !first {
			if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
				return err
			}
		}
		first = false
		base := obj.DeepCopyObject().(client.Object)
		if !edit(obj) {
			return nil
		}
		err := c.Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
		if apierrors.IsForbidden(err) {
			// The RBAC openstack-operator gives keystone-operator grants update, not
			// patch, on some kinds (topologies): an update of the object as read is
			// optimistically locked too.
			err = c.Update(ctx, obj)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("patching the finalizers of %s: %w", obj.GetName(), err)
	}
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
