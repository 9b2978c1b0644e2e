package keystoneapplicationcredential

import (
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/finalizers"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
)

const (
	// ProtectionFinalizer keeps a credential's Secret until the credential is revoked.
	ProtectionFinalizer = "keystone.openstack.org/ac-secret-protection"
	// upstreamProtectionFinalizer is keystone-operator's name for ProtectionFinalizer,
	// released too on Secrets created before a switch to this suite.
	upstreamProtectionFinalizer = "openstack.org/ac-secret-protection"
	// UserIDAnnotation records on a credential's Secret the ID of the user the credential
	// belongs to, for people to read. Nothing acts on it (anyone may edit it, and
	// keystone-operator's Secrets lack it): Keystone itself says whose a credential is.
	UserIDAnnotation = "keystone.openstack.org/user-id"
	// serviceProject is where service users and their credentials live.
	serviceProject = "service"
	day            = 24 * time.Hour
)

// holdFinalizer is the finalizer a KeystoneApplicationCredential puts on its KeystoneAPI.
func holdFinalizer(ac *keystonev1.KeystoneApplicationCredential) string {
	return finalizers.For("keystoneapplicationcredential", ac.Name)
}

// owner is how this KeystoneApplicationCredential marks what it creates in Keystone: itself, and
// the cluster it lives in (identity.OwnerMark).
func (r *Reconciler) owner(ac *keystonev1.KeystoneApplicationCredential) string {
	return identity.OwnerMark("KeystoneApplicationCredential", ac, r.ClusterID)
}
