// Package condition implements the suite's condition contract (docs/conditions.md) once,
// on lib-common's condition.Conditions, so that controllers only declare their steps and mark them.
package condition
