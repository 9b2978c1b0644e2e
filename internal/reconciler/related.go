package reconciler

import (
	"context"
	"fmt"

	"github.com/keystone-stepwise/keystone-operator/internal/permissions"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// Related returns a reference to each of objs, named in their metadata, that exists,
// in the order given and once each: read through c (the cache, which watches every
// kind a controller relates), so that it costs no request; an object the round of ctx
// created (RecordingClient) is listed before the cache has it, and one it deleted is
// not, whatever the cache still holds. The references carry the
// uid, not the resourceVersion: an object that changes does not rewrite the status
// that lists it.
func Related(ctx context.Context, c client.Client, objs ...client.Object) ([]corev1.ObjectReference, error) {
	var out []corev1.ObjectReference
	seen := map[string]bool{}
	for _, o := range objs {
		gvk, err := apiutil.GVKForObject(o, c.Scheme())
		if err != nil {
			return nil, err
		}
		key := kindKey(gvk, o)
		// A kind the manager may not list is not in its cache (and never written by it).
		if o.GetName() == "" || seen[key] || !permissions.AllowsOn(c, "list", o) {
			continue
		}
		seen[key] = true
		created, deleted := recorded(ctx, key)
		if deleted {
			continue // deleted this round: the cache may not know yet
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
			if !apierrors.IsNotFound(err) {
				return nil, fmt.Errorf("reading %s %s: %w", gvk.Kind, o.GetName(), err)
			}
			// Created this round, and not in the cache yet.
			if o.SetUID(created); created == "" {
				continue
			}
		}
		out = append(out, corev1.ObjectReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind,
			Namespace: o.GetNamespace(), Name: o.GetName(), UID: o.GetUID()})
	}
	return out, nil
}
