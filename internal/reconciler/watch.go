package reconciler

import (
	"context"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// EnqueueInNamespace wakes the objects of list's kind in an event object's namespace,
// those matching filter(object) when filter is set (nil from filter: none).
func EnqueueInNamespace(c client.Reader, list client.ObjectList, filter func(client.Object) []client.ListOption) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
		opts := []client.ListOption{client.InNamespace(o.GetNamespace())}
		if filter != nil {
			more := filter(o)
			if more == nil {
				return nil
			}
			opts = append(opts, more...)
		}
		l := list.DeepCopyObject().(client.ObjectList)
		if err := c.List(ctx, l, opts...); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing objects for a watch event")
			return nil
		}
		items, err := apimeta.ExtractList(l)
		if err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "reading a list for a watch event")
			return nil
		}
		reqs := make([]reconcile.Request, 0, len(items))
		for _, item := range items {
			if obj, ok := item.(client.Object); ok {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)})
			}
		}
		return reqs
	})
}
