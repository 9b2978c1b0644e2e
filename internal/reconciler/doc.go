// Package reconciler is the reconcile machinery every kind shares around the condition
// engine: the skeleton (get, finalizer, phases, deletion), the status patch and its
// Events, the stale-cache and repeated-patch guard, metrics and predicates.
package reconciler
