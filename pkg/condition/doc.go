// Package condition is the condition engine: declared steps, one round of them per
// reconcile, Ready, Stalled and Reconciling, severities and reasons, on lib-common's
// condition.Conditions (the contract is docs/conditions.md). It does no I/O.
package condition
