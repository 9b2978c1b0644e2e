package condition

import (
	"fmt"

	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
)

// Reason is a catalogued reason together with its one severity, so that a caller
// cannot pair a failure reason with Info or a progress reason with Error.
type Reason struct {
	Name     lc.Reason
	Severity lc.Severity
}

// InfoReason declares a reason for a step that is progressing normally.
func InfoReason(name lc.Reason) Reason { return Reason{Name: name, Severity: lc.SeverityInfo} }

// WarningReason declares a reason for a failure that the next reconcile may fix.
func WarningReason(name lc.Reason) Reason { return Reason{Name: name, Severity: lc.SeverityWarning} }

// ErrorReason declares a reason for a failure that will not fix itself.
func ErrorReason(name lc.Reason) Reason { return Reason{Name: name, Severity: lc.SeverityError} }

// Reasons of the True and Unknown states; they carry no severity.
const (
	// ReadyReason marks a True condition.
	ReadyReason lc.Reason = lc.ReadyReason
	// InitReason marks a condition re-initialised at the start of a reconcile and not evaluated yet.
	InitReason lc.Reason = lc.InitReason
)

// The generic catalogue of docs/conditions.md.
var (
	// Requested: a dependency was asked for and is being created (Info).
	Requested = InfoReason(lc.RequestedReason)
	// Created: a job or deployment was created and has not finished (Info).
	Created = InfoReason("Created")
	// CreationFailed: the step failed and will not fix itself (Error).
	CreationFailed = ErrorReason(lc.CreationFailedReason)
	// DependencyNotFound: an object this step needs does not exist (Warning).
	DependencyNotFound = WarningReason("DependencyNotFound")
	// ServiceUnavailable: a call to an API failed transiently (Warning).
	ServiceUnavailable = WarningReason("ServiceUnavailable")
	// ReconcileError: the reconcile failed before the step could be evaluated (Warning).
	ReconcileError = WarningReason("ReconcileError")
	// InvalidInput: the spec or an input holds a value a webhook could not reject (Error).
	InvalidInput = ErrorReason("InvalidInput")
)

// Catalogue gives each reason of a project its one severity. Reason panics on a name
// the catalogue lacks: reasons are declared once, at start-up, so a typo fails at once.
type Catalogue map[lc.Reason]lc.Severity

// Reason declares the reason name with the catalogue's severity.
func (c Catalogue) Reason(name lc.Reason) Reason {
	severity, ok := c[name]
	if !ok {
		panic(fmt.Sprintf("condition: reason %s is not in the catalogue", name))
	}
	return Reason{Name: name, Severity: severity}
}
