package keystoneservice

import (
	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/finalizers"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
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
)

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

// carryTakeover keeps, in round, keystone-operator's conditions saying it registered
// svc's service and user, while they may be claimed (claimsService, claimsUser): svc
// carries keystone-operator's finalizer, the condition is True, and the spec is the one
// the status was last written for (keystone-operator's proof is for the spec it saw).
// Only they prove that keystone-operator made what is unmarked in Keystone: a tenant
// can put any finalizer on a KeystoneService it creates, but cannot write its status.
// Once claimed (marked as ours in Keystone), the mark is the proof, and they are
// dropped; a change of the spec drops them too.
func carryTakeover(svc *keystonev1.KeystoneService, round *condition.Round) {
	if !controllerutil.ContainsFinalizer(svc, finalizers.UpstreamOwn("keystoneservice")) || !specSeen(svc) {
		return
	}
	for _, t := range []lc.Type{upstreamServiceReady, upstreamUserReady} {
		if c := svc.Status.Conditions.Get(t); c != nil && c.Status == corev1.ConditionTrue {
			round.Carry(t)
		}
	}
}

// specSeen tells whether svc's spec is the one its status was last written for. A
// deletion bumps the generation too: one deleted since keystone-operator last wrote its
// status (none of ours in it yet) counts as seen.
func specSeen(svc *keystonev1.KeystoneService) bool {
	observed := svc.Status.ObservedGeneration
	switch {
	case svc.Generation == observed:
		return true
	case svc.DeletionTimestamp.IsZero() || svc.Generation != observed+1:
		return false
	}
	return svc.Status.Conditions.Get(keystonev1.KeystoneServiceServiceReady) == nil
}

// claimsService tells whether the unmarked service of status.serviceID is this
// KeystoneService's: keystone-operator recorded it (carryTakeover). EnsureService claims
// it only under that ID.
func (s *scope) claimsService() bool { return s.Round.Carried(upstreamServiceReady) }

// claimsUser tells whether an unmarked user named name is this KeystoneService's:
// keystone-operator registered the spec's serviceUser (carryTakeover), and it is not the
// admin user of api, whatever keystone-operator did.
func (s *scope) claimsUser(api *keystonev1.KeystoneAPI, name string) bool {
	return s.Round.Carried(upstreamUserReady) && name == s.service.Spec.ServiceUser && name != api.Spec.AdminUser
}

// claimed drops keystone-operator's proof of t once what it proves carries our mark.
func (s *scope) claimed(t lc.Type, ownership identity.Ownership) {
	if ownership == identity.Owned {
		s.Round.Drop(t)
	}
}

// failed reports a Keystone error on step with the step's failed reason (Session.Failed).
func (r *Reconciler) failed(s *scope, step lc.Type, err error) (ctrl.Result, error) {
	return s.Failed(step, failedReasons[step], err)
}
