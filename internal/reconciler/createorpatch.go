package reconciler

import (
	"context"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// CreateOrPatch is controllerutil.CreateOrPatch for an object whose status the caller
// does not write: obj is read into itself, mutate applied, and obj created when it is
// missing, patched (a JSON merge patch of what mutate changed) when mutate changed it,
// left alone otherwise. Where controllerutil converts the object to unstructured maps
// before and after mutate to compare them (most of its cost, paid by every reconcile for
// every child), this compares the typed objects (reflect.DeepEqual), and computes the patch only for a
// change; a change that marshals to nothing (an empty map for a nil one) writes nothing.
func CreateOrPatch(ctx context.Context, c client.Client, obj client.Object, mutate func() error) (controllerutil.OperationResult, error) {
	key := client.ObjectKeyFromObject(obj)
	if err := c.Get(ctx, key, obj); err != nil {
		if !apierrors.IsNotFound(err) {
			return controllerutil.OperationResultNone, err
		}
		if err := mutateKeeping(key, obj, mutate); err != nil {
			return controllerutil.OperationResultNone, err
		}
		if err := c.Create(ctx, obj); err != nil {
			return controllerutil.OperationResultNone, err
		}
		return controllerutil.OperationResultCreated, nil
	}
	before := obj.DeepCopyObject().(client.Object)
	if err := mutateKeeping(key, obj, mutate); err != nil {
		return controllerutil.OperationResultNone, err
	}
	// reflect.DeepEqual compares byte slices (a Secret's data) as a whole, where
	// equality.Semantic walks them byte by byte through reflection (a configuration
	// Secret's comparison was an eighth of the manager's processor time). What it finds
	// different but is semantically the same (a Quantity written another way) marshals
	// to the same JSON: the empty patch below writes nothing.
	if reflect.DeepEqual(before, obj) {
		return controllerutil.OperationResultNone, nil
	}
	patch := client.MergeFrom(before)
	data, err := patch.Data(obj)
	if err != nil {
		return controllerutil.OperationResultNone, fmt.Errorf("computing the patch of %s: %w", key, err)
	}
	if string(data) == "{}" {
		return controllerutil.OperationResultNone, nil
	}
	if err := c.Patch(ctx, obj, patch); err != nil {
		return controllerutil.OperationResultNone, err
	}
	return controllerutil.OperationResultUpdated, nil
}

// mutateKeeping runs mutate on obj, which must keep its name and namespace.
func mutateKeeping(key client.ObjectKey, obj client.Object, mutate func() error) error {
	if err := mutate(); err != nil {
		return err
	}
	if client.ObjectKeyFromObject(obj) != key {
		return fmt.Errorf("the object's name or namespace changed from %s", key)
	}
	return nil
}
