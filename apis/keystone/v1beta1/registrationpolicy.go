package v1beta1

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// RegistrationPolicy says what the KeystoneServices, KeystoneEndpoints and
// KeystoneApplicationCredentials of the KeystoneAPI's namespace may obtain in Keystone,
// where the operator acts with the admin's credentials. Its writer is whoever may edit
// the KeystoneAPI, who holds the admin password anyway. An extension of this suite:
// absent (keystone-operator's schema prunes it), the namespace may do what
// keystone-operator lets it do (every field's default, and endpoints under every
// adopted service but an identity service: KeystoneAPI.AllowsAdoptedEndpoints), which
// makes whoever writes its KeystoneServices Keystone's admin (docs/security.md).
//
// A pattern matches a name case-insensitively (Keystone on MariaDB finds "Glance" as
// "glance"); "*" stands for any run of characters (in a "<type>/<name>" pattern, within
// its part).
type RegistrationPolicy struct {
	// Roles a KeystoneService may have its user given on the service project (spec.roles);
	// "*" for any. The default is what keystone-operator gives every service user.
	// +kubebuilder:default={admin,service}
	// +kubebuilder:validation:items:MinLength=1
	// +listType=set
	// +optional
	Roles []string `json:"roles,omitempty"`

	// CreateRoles lets a KeystoneService create a role of spec.roles that Keystone lacks
	// (keystone-operator creates admin and service when missing). False: a missing role
	// is refused, and nothing is written to Keystone.
	// +kubebuilder:default=true
	// +optional
	CreateRoles *bool `json:"createRoles,omitempty"`

	// Services a KeystoneService may register or use, as "<serviceType>/<serviceName>"
	// patterns ("image/glance", "image/*", "*/tenant-a-*"; each part matched on its own)
	// or "*" for any.
	// +kubebuilder:default={"*"}
	// +kubebuilder:validation:items:MinLength=1
	// +listType=set
	// +optional
	Services []string `json:"services,omitempty"`

	// Users a KeystoneService (spec.serviceUser) or KeystoneApplicationCredential
	// (spec.userName) may name, as patterns ("glance", "tenant-a-*", "*"). The
	// KeystoneAPI's admin user is refused whatever this says.
	// +kubebuilder:default={"*"}
	// +kubebuilder:validation:items:MinLength=1
	// +listType=set
	// +optional
	Users []string `json:"users,omitempty"`

	// AdoptedServiceEndpoints are the services, as "<serviceType>/<serviceName>"
	// patterns, that existed in Keystone before a KeystoneService of the namespace
	// adopted them (no mark: made by hand, by keystone-operator in another region, by
	// keystone-manage bootstrap) under which its KeystoneEndpoints may still add
	// endpoints. By default none: endpoints go only under a service the namespace
	// registered (created, claimed from keystone-operator, or shared with its other
	// regions). Where the KeystoneAPI has no registrationPolicy at all
	// (keystone-operator's schema prunes it), under every adopted service but an
	// identity service, as keystone-operator adds endpoints under any service it finds
	// (KeystoneAPI.AllowsAdoptedEndpoints).
	// +kubebuilder:validation:items:MinLength=1
	// +listType=set
	// +optional
	AdoptedServiceEndpoints []string `json:"adoptedServiceEndpoints,omitempty"`
}

// Defaults of RegistrationPolicy, as the schema fills them in.
var (
	DefaultPolicyRoles    = []string{"admin", "service"}
	DefaultPolicyServices = []string{"*"}
	DefaultPolicyUsers    = []string{"*"}
)

// Policy is the KeystoneAPI's registration policy with its defaults filled in where the
// field, or the whole policy, is absent (keystone-operator's schema, or a client that
// never sends it).
func (k *KeystoneAPI) Policy() RegistrationPolicy {
	var p RegistrationPolicy
	if k.Spec.RegistrationPolicy != nil {
		p = *k.Spec.RegistrationPolicy.DeepCopy()
	}
	if p.Roles == nil {
		p.Roles = slices.Clone(DefaultPolicyRoles)
	}
	if p.CreateRoles == nil {
		create := true
		p.CreateRoles = &create
	}
	if p.Services == nil {
		p.Services = slices.Clone(DefaultPolicyServices)
	}
	if p.Users == nil {
		p.Users = slices.Clone(DefaultPolicyUsers)
	}
	return p
}

// AllowsRole tells whether a KeystoneService may ask for role.
func (p RegistrationPolicy) AllowsRole(role string) bool { return matchAny(p.Roles, role) }

// MayCreateRoles tells whether a role Keystone lacks may be created.
func (p RegistrationPolicy) MayCreateRoles() bool { return p.CreateRoles == nil || *p.CreateRoles }

// AllowsService tells whether a KeystoneService may register or use the service of
// serviceType and name.
func (p RegistrationPolicy) AllowsService(serviceType, name string) bool {
	return matchService(p.Services, serviceType, name)
}

// matchService tells whether one of patterns matches the service of serviceType and
// name: a "<type>/<name>" pattern matches each part on its own, a "*" in it standing for
// no "/" (so "*/tenant-a-*" never matches a type that holds a "/"); a pattern without
// "/" matches "<type>/<name>" whole ("*": any).
func matchService(patterns []string, serviceType, name string) bool {
	for _, p := range patterns {
		typePattern, namePattern, split := strings.Cut(p, "/")
		if !split {
			if MatchName(p, serviceType+"/"+name) {
				return true
			}
			continue
		}
		if !strings.Contains(serviceType, "/") && !strings.Contains(name, "/") &&
			MatchName(typePattern, serviceType) && MatchName(namePattern, name) {
			return true
		}
	}
	return false
}

// AllowsUser tells whether a KeystoneService or KeystoneApplicationCredential may name
// the user name (the admin user aside, which is never allowed).
func (p RegistrationPolicy) AllowsUser(name string) bool { return matchAny(p.Users, name) }

// AllowsAdoptedEndpoints tells whether the namespace's KeystoneEndpoints may add
// endpoints under an adopted service of serviceType and name: one
// spec.registrationPolicy.adoptedServiceEndpoints lists; where the KeystoneAPI has no
// registrationPolicy (keystone-operator's schema prunes it; openstack-operator installs
// that schema), every one but an identity service. keystone-operator adds endpoints
// under any service of the type and name it finds: a region still on keystone-operator
// registered the services a region on this suite joins (docs/multiregion.md), and the
// namespace's writers are Keystone's admin under the default policy anyway. Keystone's
// own identity service (keystone-manage bootstrap's, whose endpoints every login
// follows) is the exception: no service operator registers one, and an endpoint added
// there reaches every user's catalog.
func (k *KeystoneAPI) AllowsAdoptedEndpoints(serviceType, name string) bool {
	if k.Spec.RegistrationPolicy == nil {
		return !strings.EqualFold(serviceType, IdentityServiceType)
	}
	return matchService(k.Spec.RegistrationPolicy.AdoptedServiceEndpoints, serviceType, name)
}

// IdentityServiceType is Keystone's own service type in its catalog.
const IdentityServiceType = "identity"

// AdoptedEndpointsSetting says what AllowsAdoptedEndpoints follows, for a message.
func (k *KeystoneAPI) AdoptedEndpointsSetting() string {
	if k.Spec.RegistrationPolicy == nil {
		return "no spec.registrationPolicy: every service but an identity service"
	}
	return k.Policy().Setting("adoptedServiceEndpoints")
}

// Setting says a field of the policy as a message names it: its path and value.
func (p RegistrationPolicy) Setting(field string) string {
	var value any
	switch field {
	case "roles":
		value = p.Roles
	case "createRoles":
		value = p.MayCreateRoles()
	case "services":
		value = p.Services
	case "users":
		value = p.Users
	case "adoptedServiceEndpoints":
		value = p.AdoptedServiceEndpoints
		if len(p.AdoptedServiceEndpoints) == 0 {
			value = "none"
		}
	}
	return fmt.Sprintf("spec.registrationPolicy.%s: %v", field, value)
}

// matchAny tells whether one of patterns matches name.
func matchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if MatchName(p, name) {
			return true
		}
	}
	return false
}

// MatchName tells whether pattern matches name, case-insensitively, "*" standing for any
// run of characters.
func MatchName(pattern, name string) bool {
	return match(strings.ToLower(pattern), strings.ToLower(name))
}

// match is a glob of "*" alone, by runes, backtracking to the last star.
func match(pattern, name string) bool {
	p, n := 0, 0
	star, resume := -1, 0
	for n < len(name) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, resume = p, n
			p++
		case p < len(pattern) && samePrefixRune(pattern[p:], name[n:]):
			_, size := utf8.DecodeRuneInString(name[n:])
			p += size
			n += size
		case star >= 0:
			_, size := utf8.DecodeRuneInString(name[resume:])
			resume += size
			p, n = star+1, resume
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// samePrefixRune tells whether a and b start with the same rune.
func samePrefixRune(a, b string) bool {
	ra, _ := utf8.DecodeRuneInString(a)
	rb, _ := utf8.DecodeRuneInString(b)
	return ra == rb
}
