package reconciler

import (
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// IgnoreStatusUpdates passes every event but an update that changed only the status
// or the finalizers: a controller's own writes of those must not start another
// reconcile, or a step failed with severity Error would be retried at once. Deletion
// is seen through the deletion timestamp; during deletion a change of the finalizers
// passes too, for an object whose deletion waits for others to release theirs.
var IgnoreStatusUpdates = IgnoreOwnUpdates()

// IgnoreOwnUpdates is IgnoreStatusUpdates for a controller that also records what it
// did in annotations of its object (own): a change of those alone is its own write too.
func IgnoreOwnUpdates(own ...string) predicate.Funcs {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, n := e.ObjectOld, e.ObjectNew
			deletingFinalizers := !n.GetDeletionTimestamp().IsZero() && !slices.Equal(o.GetFinalizers(), n.GetFinalizers())
			return o.GetGeneration() != n.GetGeneration() ||
				!maps.Equal(o.GetLabels(), n.GetLabels()) ||
				!maps.Equal(without(o.GetAnnotations(), own), without(n.GetAnnotations(), own)) ||
				!o.GetDeletionTimestamp().Equal(n.GetDeletionTimestamp()) ||
				deletingFinalizers
		},
	}
}

// Touched is a digest of what a person changes of obj, IgnoreOwnUpdates' complement: its
// generation (the spec), labels and annotations but own, the controller's own records.
// Neither a status, a finalizer nor an own annotation changes it, whoever writes them.
func Touched(obj interface {
	GetGeneration() int64
	GetLabels() map[string]string
	GetAnnotations() map[string]string
}, own ...string) string {
	h := sha256.New()
	_, _ = fmt.Fprintf(h, "%d\x00", obj.GetGeneration())
	for _, m := range []map[string]string{obj.GetLabels(), without(obj.GetAnnotations(), own)} {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			_, _ = fmt.Fprintf(h, "%s=%s\x00", k, m[k])
		}
		_, _ = h.Write([]byte{1})
	}
	return fmt.Sprintf("%x", h.Sum(nil)[:12])
}

// without returns m less the keys; m itself when there is none to drop.
func without(m map[string]string, keys []string) map[string]string {
	if len(keys) == 0 || len(m) == 0 {
		return m
	}
	out := maps.Clone(m)
	for _, k := range keys {
		delete(out, k)
	}
	return out
}
