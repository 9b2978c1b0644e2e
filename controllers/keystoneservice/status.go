package keystoneservice

import (
	"errors"
	"fmt"
	"strings"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/controllers/registration"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/internal/reasons"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
)

// The decisions of KeystoneService's steps: pure functions from what a phase observed
// to the step's verdict, covered reason by reason in status_test.go. A Keystone error
// is the shared registration.Session's (FailedAs).

// inputVerdict is InputReady's refusal of what svc asks for that its namespace's
// KeystoneAPI, api, does not allow (NotAllowed, Error): the admin's user, a user,
// service or role outside api's registration policy, the admin user of another
// namespace's (others). True when it asks for nothing refused (the passwords are read
// next).
func inputVerdict(svc *keystonev1.KeystoneService, api *keystonev1.KeystoneAPI, others registration.OtherAdmins) condition.Verdict {
	spec := svc.Spec
	for _, why := range []string{
		registration.UserRefusal(api, "spec.serviceUser", spec.ServiceUser),
		registration.ServiceRefusal(api, spec.ServiceType, spec.ServiceName),
		registration.RolesRefusal(api, spec.ServiceRoles()),
		registration.PasswordRefusal(api, "spec.secret", spec.Secret, spec.PasswordSelector),
		others.Refusal("spec.serviceUser", spec.ServiceUser),
	} {
		if why != "" {
			return registration.NotAllowedVerdict(why)
		}
	}
	return condition.TrueVerdict("KeystoneAPI %s allows user %s, service %s/%s and roles %v", api.Name, spec.ServiceUser,
		spec.ServiceType, spec.ServiceName, spec.ServiceRoles())
}

// serviceVerdict is ServiceReady from Keystone's service (reg), or from what refused it,
// InvalidInput (Error) each, nothing written: a service of that type and name that
// another KeystoneService registered; one of that type under another name (a catalog
// has one service of a type); one another region keeps, or that existed unmarked
// (adopted), defined otherwise than the spec says.
func serviceVerdict(spec keystonev1.KeystoneServiceSpec, reg identity.Registered, refused error) condition.Verdict {
	var foreign *identity.ForeignError
	var differs *identity.DefinitionConflictError
	var taken *identity.TypeTakenError
	switch {
	case errors.As(refused, &foreign):
		return condition.FalseVerdict(condition.InvalidInput, "%v; choose another serviceType or serviceName", foreign)
	case errors.As(refused, &taken) && taken.Found == taken.Type:
		return condition.FalseVerdict(condition.InvalidInput, "%v: make spec.serviceName %s, or have that one removed "+
			"(nothing is written; looked at again when Keystone's services of type %s change)", taken, taken.Name, taken.Type)
	case errors.As(refused, &taken):
		return condition.FalseVerdict(condition.InvalidInput, "%v: have that one removed (nothing is written; looked at again "+
			"when Keystone's services of type %s change)", taken, taken.Found)
	case errors.As(refused, &differs) && differs.Keeper == "":
		return condition.FalseVerdict(condition.InvalidInput, "%v: make this spec's serviceDescription and enabled match it, "+
			"or have the service's owner change it in Keystone (nothing is written)", differs)
	case errors.As(refused, &differs):
		return condition.FalseVerdict(condition.InvalidInput, "%v: the regions sharing a service define it alike; "+
			"make this spec's serviceDescription and enabled the keeper's (nothing is written, and this region is not among the "+
			"service's owners until it agrees)", differs)
	}
	return condition.TrueVerdict("service %s (%s) registered as %s%s", spec.ServiceName, spec.ServiceType, reg.ID, ownershipNote(reg))
}

// userVerdict is ServiceUserReady from Keystone's user (reg), or from what refused it:
// Keystone's admin, whatever name reached it (NotAllowed, Error); a user Keystone
// found under another name, or one that another namespace's or cluster's
// KeystoneService registered (InvalidInput, Error); or from conflict: a user shared
// with another KeystoneService of the namespace whose password is not the spec's,
// PasswordConflict (Warning).
func userVerdict(spec keystonev1.KeystoneServiceSpec, reg identity.Registered, refused error,
	conflict *identity.PasswordConflictError) condition.Verdict {
	var foreign *identity.ForeignError
	var admin *identity.AdminUserError
	var otherName *identity.OtherNameError
	var federated *identity.FederatedUserError
	switch {
	case errors.As(refused, &admin):
		return registration.NotAllowedVerdict(fmt.Sprintf("spec.serviceUser: %v", admin))
	case errors.As(refused, &otherName):
		return condition.FalseVerdict(condition.InvalidInput, "spec.serviceUser: %v (nothing is written)", otherName)
	case errors.As(refused, &federated):
		return condition.FalseVerdict(condition.InvalidInput, "spec.serviceUser: %v (nothing is written)", federated)
	case errors.As(refused, &foreign):
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
