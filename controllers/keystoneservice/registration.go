package keystoneservice

import (
	"regexp"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/controllers/registration"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
)

const (
	// ServiceProject holds the service users, in DefaultDomain.
	ServiceProject = "service"
	// DefaultDomain is Keystone's default domain.
	DefaultDomain   = "default"
	defaultDomainID = "default"
	// UserAnnotation records on a KeystoneService the name of the user it registers in
	// Keystone: written with its finalizer, before its first request to Keystone, and
	// moved to a new serviceUser only once the previous user is removed (when it was
	// this KeystoneService's), so that no user it created is ever forgotten.
	// Annotations, not status: metadata is kept on every schema (keystone-operator's
	// KeystoneService status has no room for it). Where the user's password came from
	// is recorded on the user itself (identity.PasswordFromAttribute).
	UserAnnotation = "keystone.openstack.org/service-user"
	// legacyUserIDAnnotation and legacyPasswordFromAnnotation are the records of
	// earlier versions (the user's ID, and the Secret version its password was set
	// from): read once, to find the user they name, and then removed.
	legacyUserIDAnnotation       = "keystone.openstack.org/user-id"
	legacyPasswordFromAnnotation = "keystone.openstack.org/password-set-from"
	// PasswordRefusedAnnotation records the last check of the Secret's password against a
	// user this KeystoneService does not set it on (adopted, shared, another region's)
	// that Keystone refused (a digest of what decided it: the user, the two passwords'
	// sources, the object as a person last touched it; no password). That very check is
	// not made again, also after the operator restarts: every refusal counts towards
	// Keystone's lockout.
	PasswordRefusedAnnotation = "keystone.openstack.org/password-refused"
)

// ownAnnotations are the annotations the operator writes on a KeystoneService: a change
// of those alone is not a person's.
var ownAnnotations = []string{UserAnnotation, legacyUserIDAnnotation, legacyPasswordFromAnnotation, PasswordRefusedAnnotation}

// owner is how this KeystoneService marks what it creates in Keystone: itself, and
// the cluster it lives in (identity.OwnerMark).
func (r *Reconciler) owner(svc *keystonev1.KeystoneService) string {
	return identity.OwnerMark("KeystoneService", svc, r.ClusterID)
}

// keystone-operator's own condition types on a KeystoneService: it writes them, through
// the status subresource, once it registered the service (status.serviceID) and the
// user. This suite never writes them.
const (
	upstreamServiceReady lc.Type = "KeystoneServiceOSServiceReady"
	upstreamUserReady    lc.Type = "KeystoneServiceOSUserReady"
)

// keystone-operator's record of what it registered for a KeystoneService is the
// messages of its own conditions, written through the status subresource (a tenant
// cannot write them) after each success, as its api/v1beta1/conditions.go words them
// (unchanged since 2022): "Keystone Service <serviceName> - <serviceID> ready" and
// "Keystone Service user <serviceUser> ready". Each names what it proves, so the proof
// holds whatever the spec became since, on keystone-operator's schema too (whose
// KeystoneService status has no observedGeneration).
var (
	upstreamServiceMessage = regexp.MustCompile(`^Keystone Service (.*) - (\S+) ready$`)
	upstreamUserMessage    = regexp.MustCompile(`^Keystone Service user (.+) ready$`)
)

// upstreamProof returns what keystone-operator's condition t of svc says it registered:
// the service's ID or the user's name; "" when t is not True with keystone-operator's message.
func upstreamProof(svc *keystonev1.KeystoneService, t lc.Type) string {
	c := svc.Status.Conditions.Get(t)
	if c == nil || c.Status != corev1.ConditionTrue {
		return ""
	}
	pattern, group := upstreamUserMessage, 1
	if t == upstreamServiceReady {
		pattern, group = upstreamServiceMessage, 2
	}
	if m := pattern.FindStringSubmatch(c.Message); m != nil {
		return m[group]
	}
	return ""
}

// carryTakeover keeps, in round, keystone-operator's conditions saying what it registered
// for svc (upstreamProof) while they may be used: until what they name carries this
// suite's mark (claimed), or is gone. They are the only proof that keystone-operator made
// what is unmarked in Keystone: a tenant can put keystone-operator's finalizer on a
// KeystoneService it creates, but cannot write its status.
func carryTakeover(svc *keystonev1.KeystoneService, round *condition.Round) {
	for _, t := range []lc.Type{upstreamServiceReady, upstreamUserReady} {
		if upstreamProof(svc, t) != "" {
			round.Carry(t)
		}
	}
}

// provenService is the ID of the service keystone-operator registered for this
// KeystoneService, while its proof is carried; else "".
func (s *scope) provenService() string {
	if !s.Round.Carried(upstreamServiceReady) {
		return ""
	}
	return upstreamProof(s.service, upstreamServiceReady)
}

// provenUser is the name of the user keystone-operator registered for this
// KeystoneService, while its proof is carried; else "".
func (s *scope) provenUser() string {
	if !s.Round.Carried(upstreamUserReady) {
		return ""
	}
	return upstreamProof(s.service, upstreamUserReady)
}

// ClaimsProven tells whether KeystoneService ks claims (or has claimed) the unmarked
// service as Keystone has it: keystone-operator's proof in ks's status names its ID, and
// api lets the namespace register its type and name (claimsService). A KeystoneEndpoint
// that comes to the service before ks's round marked it takes it as ks's.
func ClaimsProven(ks *keystonev1.KeystoneService, api *keystonev1.KeystoneAPI, service *identity.Service) bool {
	return service.ID != "" && upstreamProof(ks, upstreamServiceReady) == service.ID && allowsService(api, service)
}

// allowsService tells whether api lets its namespace register the service as Keystone
// has it, type and name.
func allowsService(api *keystonev1.KeystoneAPI, service *identity.Service) bool {
	return registration.ServiceRefusal(api, service.Type, service.Name) == ""
}

// claimsService is the claim (identity.ServiceClaim) of the unmarked service of ID id,
// nil when id is not the one keystone-operator recorded (provenService): that service
// is this KeystoneService's when api lets the namespace register its type and name as
// Keystone has them. keystone-operator recorded the ID of a service it found and used
// as it did one it created (Keystone's own identity service, another namespace's), and
// a namespace may have been narrowed since; what it may not name stays whoever's it is.
func (s *scope) claimsService(api *keystonev1.KeystoneAPI, id string) identity.ServiceClaim {
	if id == "" || id != s.provenService() {
		return nil
	}
	return func(svc *identity.Service) bool { return svc.ID == id && allowsService(api, svc) }
}

// claimsUser tells whether an unmarked user named name is this KeystoneService's:
// keystone-operator registered it (provenUser), and api lets the namespace name it (never
// its admin user, whatever keystone-operator did).
func (s *scope) claimsUser(api *keystonev1.KeystoneAPI, name string) bool {
	return name != "" && name == s.provenUser() && registration.UserRefusal(api, "", name) == ""
}

// claimed drops keystone-operator's proof of t, naming name, once name is settled:
// marked as ours (owned), or removed (gone). A proof naming something else is kept.
func (s *scope) claimed(t lc.Type, name string, settled bool) {
	if settled && name != "" && name == upstreamProof(s.service, t) {
		s.Round.Drop(t)
	}
}

// failed reports a Keystone error on step with the step's failed reason (Session.Failed).
func (r *Reconciler) failed(s *scope, step lc.Type, err error) (ctrl.Result, error) {
	return s.Failed(step, failedReasons[step], err)
}
