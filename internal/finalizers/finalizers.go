package finalizers

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// Add adds finalizer to obj when missing. It patches the finalizer list alone, with an
// optimistic lock: an Update would write the whole object as the Go type serialises it
// (empty structs included) and so change the spec of an object a user applied, and a
// patch without the lock could drop a finalizer someone added meanwhile.
func Add(ctx context.Context, c client.Client, obj client.Object, finalizer string) error {
	return change(ctx, c, obj, finalizer, controllerutil.AddFinalizer)
}

// Remove removes finalizer from obj when present; an object already gone is fine.
func Remove(ctx context.Context, c client.Client, obj client.Object, finalizer string) error {
	return client.IgnoreNotFound(change(ctx, c, obj, finalizer, controllerutil.RemoveFinalizer))
}

func change(ctx context.Context, c client.Client, obj client.Object, finalizer string,
	edit func(client.Object, string) bool) error {
	base := obj.DeepCopyObject().(client.Object)
	if !edit(obj, finalizer) {
		return nil
	}
	patch := client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})
	if err := c.Patch(ctx, obj, patch); err != nil {
		return fmt.Errorf("patching the finalizers of %s: %w", obj.GetName(), err)
	}
	return nil
}
