package keystoneservice

import (
	"errors"
	"fmt"
	"strings"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/internal/reasons"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
)

// The decisions of KeystoneService's steps: pure functions from what a phase observed
// to the step's verdict, covered reason by reason in status_test.go. A Keystone error
// is the shared registration.Session's (FailedAs).

// inputVerdict is InputReady once the passwords are found: the admin's user is not a
// service's, so a serviceUser that names it is InvalidInput (Error).
func inputVerdict(svc *keystonev1.KeystoneService, api *keystonev1.KeystoneAPI) condition.Verdict {
	spec := svc.Spec
	if spec.ServiceUser == api.Spec.AdminUser {
		return condition.FalseVerdict(condition.InvalidInput,
			"serviceUser %s is the admin user of KeystoneAPI %s; a service needs a user of its own", spec.ServiceUser, api.Name)
	}
	return condition.TrueVerdict("password of user %s found in secret %s", spec.ServiceUser, spec.Secret)
}

// serviceVerdict is ServiceReady from Keystone's service (reg), or from foreign: a
// service of that type and name that another KeystoneService registered, which is
// InvalidInput (Error).
func serviceVerdict(spec keystonev1.KeystoneServiceSpec, reg identity.Registered, refused error) condition.Verdict {
	var foreign *identity.ForeignError
	var differs *identity.DefinitionConflictError
	switch {
	case errors.As(refused, &foreign):
		return condition.FalseVerdict(condition.InvalidInput, "%v; choose another serviceType or serviceName", foreign)
	case errors.As(refused, &differs):
		return condition.FalseVerdict(condition.InvalidInput, "%v: the regions sharing a service define it alike; "+
			"make this spec's serviceDescription and enabled the keeper's (nothing is written, and this region is not among the "+
			"service's owners until it agrees)", differs)
	}
	return condition.TrueVerdict("service %s (%s) registered as %s%s", spec.ServiceName, spec.ServiceType, reg.ID, ownershipNote(reg))
}

// userVerdict is ServiceUserReady from Keystone's user (reg), or from foreign: a user of
// that name that another namespace's or cluster's KeystoneService registered, which is
// InvalidInput (Error); or from conflict: a user shared with another KeystoneService
// of the namespace whose password is not the spec's, PasswordConflict (Warning).
func userVerdict(spec keystonev1.KeystoneServiceSpec, reg identity.Registered, foreign *identity.ForeignError,
	conflict *identity.PasswordConflictError) condition.Verdict {
	switch {
	case foreign != nil:
		return condition.FalseVerdict(condition.InvalidInput, "%v; choose another serviceUser", foreign)
	case conflict != nil && conflict.Owner == "":
		return condition.FalseVerdict(reasons.Of(keystonev1.PasswordConflictReason),
			"%v: secret %s key %s holds another password; put the user's password there, or choose another serviceUser "+
				"(checked again when the secret or this KeystoneService changes)", conflict, spec.Secret, spec.PasswordSelector)
	case conflict != nil && conflict.Region:
		return condition.FalseVerdict(reasons.Of(keystonev1.PasswordConflictReason),
			"%v: secret %s key %s holds another password; the regions sharing a user need its keeper's password, and until "+
				"this one has it, it is not among the user's owners and asks for no role (checked again when the secret "+
				"changes or the keeper sets another password)", conflict, spec.Secret, spec.PasswordSelector)
	case conflict != nil:
		return condition.FalseVerdict(reasons.Of(keystonev1.PasswordConflictReason),
			"%v: secret %s key %s holds another password; KeystoneServices sharing a user need the same password (checked "+
				"again when the secret changes or the keeper sets another password)", conflict, spec.Secret, spec.PasswordSelector)
	}
	if reg.Ownership == identity.Adopted {
		return condition.TrueVerdict("user %s (%s) has the password of secret %s (adopted: it existed before, its password is "+
			"checked, never set, and it stays when this KeystoneService goes)", spec.ServiceUser, reg.ID, spec.Secret)
	}
	return condition.TrueVerdict("user %s (%s) has the password of secret %s%s", spec.ServiceUser, reg.ID, spec.Secret, ownershipNote(reg))
}

// assignmentVerdict is RoleAssignmentReady once the user has the spec's roles on the
// service project, and (exclusive: the user is ours) no other.
func assignmentVerdict(spec keystonev1.KeystoneServiceSpec, exclusive bool) condition.Verdict {
	only := ""
	if exclusive {
		only = " (and no other)"
	}
	return condition.TrueVerdict("user %s has roles %v%s on project %s", spec.ServiceUser, spec.ServiceRoles(), only, ServiceProject)
}

// endpointsHoldVerdict is ServiceReady while KeystoneEndpoints (holders) hold a
// KeystoneService that is deleted or replaced (why): Requested (Info), their endpoints
// are removed first.
func endpointsHoldVerdict(why string, holders []string) condition.Verdict {
	return condition.FalseVerdict(condition.Requested, "%s: waiting for KeystoneEndpoints %s to remove their endpoints", why,
		strings.Join(holders, ", "))
}

// ownershipNote says, in a step's message, that an entity is used but not this
// KeystoneService's to remove: adopted, or shared with another KeystoneService.
func ownershipNote(reg identity.Registered) string {
	switch reg.Ownership {
	case identity.Adopted:
		return " (adopted: it existed before, and stays when this KeystoneService goes)"
	case identity.Shared:
		return fmt.Sprintf(" (shared with %s, which sets its password; it stays while either names it)", identity.OwnerName(reg.Keeper))
	case identity.Joined:
		return fmt.Sprintf(" (shared with the other regions: kept by %s; it stays while any region names it)", identity.OwnerName(reg.Keeper))
	}
	return ""
}
