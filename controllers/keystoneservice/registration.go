package keystoneservice

import (
	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/finalizers"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
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

// takenOver tells whether keystone-operator registered this KeystoneService before
// this suite (its own finalizer is on it): the service it recorded and the user of
// serviceUser, which it would delete with the KeystoneService, are claimed as ours
// although they carry no mark.
func takenOver(svc *keystonev1.KeystoneService) bool {
	return controllerutil.ContainsFinalizer(svc, finalizers.UpstreamOwn("keystoneservice"))
}

// claimsUnmarked tells whether an unmarked user named name is this KeystoneService's
// (takenOver), which it never is for the admin user of api, whatever keystone-operator did.
func claimsUnmarked(svc *keystonev1.KeystoneService, api *keystonev1.KeystoneAPI, name string) bool {
	return takenOver(svc) && name != api.Spec.AdminUser
}

// failed reports a Keystone error on step with the step's failed reason (Session.Failed).
func (r *Reconciler) failed(s *scope, step lc.Type, err error) (ctrl.Result, error) {
	return s.Failed(step, failedReasons[step], err)
}
