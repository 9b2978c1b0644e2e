package condition

import (
	"maps"

	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// IgnoreStatusUpdates passes every event but an update that changed only the status
// or the finalizers: a controller's own writes of those must not start another
// reconcile, or a step failed with severity Error would be retried at once. Deletion
// is seen through the deletion timestamp.
var IgnoreStatusUpdates = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, n := e.ObjectOld, e.ObjectNew
		return o.GetGeneration() != n.GetGeneration() ||
			!maps.Equal(o.GetLabels(), n.GetLabels()) ||
			!maps.Equal(o.GetAnnotations(), n.GetAnnotations()) ||
			!o.GetDeletionTimestamp().Equal(n.GetDeletionTimestamp())
	},
}
