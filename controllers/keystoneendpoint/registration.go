package keystoneendpoint

import (
	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/finalizers"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
)

// holdFinalizer is the finalizer a KeystoneEndpoint puts on its KeystoneService before
// its first request to Keystone, so that the KeystoneService (which keeps the
// KeystoneAPI) goes only after the endpoints are removed. Earlier versions of this
// suite and keystone-operator also put it on the KeystoneAPI; it is released there.
func holdFinalizer(ep *keystonev1.KeystoneEndpoint) string {
	return finalizers.For("keystoneendpoint", ep.Name)
}

// upstreamHoldFinalizer is keystone-operator's name for holdFinalizer, released too.
func upstreamHoldFinalizer(ep *keystonev1.KeystoneEndpoint) string {
	return finalizers.Upstream("keystoneendpoint", ep.Name)
}

// owner is how this KeystoneEndpoint marks what it creates in Keystone: itself, and
// the cluster it lives in (identity.OwnerMark).
func (r *Reconciler) owner(ep *keystonev1.KeystoneEndpoint) string {
	return identity.OwnerMark("KeystoneEndpoint", ep, r.ClusterID)
}
