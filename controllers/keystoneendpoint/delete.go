package keystoneendpoint

import (
	"context"
	"fmt"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/controllers/registration"
	"github.com/keystone-stepwise/keystone-operator/internal/finalizers"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	"github.com/keystone-stepwise/keystone-operator/pkg/identity"
	ctrl "sigs.k8s.io/controller-runtime"
)

// reconcileDelete removes this KeystoneEndpoint's endpoints from Keystone, then its
// finalizers on the KeystoneService and the KeystoneAPI, then its own. A KeystoneAPI
// that is gone, or being deleted with its Keystone, takes the endpoints with it.
func (r *Reconciler) reconcileDelete(ctx context.Context, s *scope) (ctrl.Result, error) {
	ep := s.endpoint
	api, _, _, err := registration.KeystoneAPI(ctx, r.Client, ep.Namespace)
	if err != nil {
		return ctrl.Result{}, err
	}
	if api != nil && registration.KeystoneStays(api) && registered(ep, api) {
		if done, err := r.deregister(ctx, s, api); err != nil || !done {
			return ctrl.Result{}, err
		}
	}
	svc, err := r.keystoneService(ctx, ep)
	if err != nil {
		return ctrl.Result{}, err
	}
	if svc != nil {
		if err := finalizers.Remove(ctx, r.Client, svc, holdFinalizer(ep), upstreamHoldFinalizer(ep)); err != nil {
			return ctrl.Result{}, err
		}
	}
	if err := registration.Release(ctx, r.Client, ep.Namespace, holdFinalizer(ep), upstreamHoldFinalizer(ep)); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, finalizers.Remove(ctx, r.Client, ep, Finalizer, finalizers.UpstreamOwn("keystoneendpoint"))
}

// deregister deletes this KeystoneEndpoint's endpoints, with the admin's credentials
// alone. done is false, with the step saying why, when it cannot yet.
func (r *Reconciler) deregister(ctx context.Context, s *scope, api *keystonev1.KeystoneAPI) (done bool, err error) {
	step := keystonev1.KeystoneEndpointEndpointsReady
	ep := s.endpoint
	serviceID := ep.Status.ServiceID
	if serviceID == "" {
		// A crash before the first status write: the service's ID is the KeystoneService's.
		svc, err := r.keystoneService(ctx, ep)
		if err != nil {
			return false, err
		}
		if svc != nil {
			serviceID = svc.Status.ServiceID
		}
	}
	if serviceID == "" {
		return true, nil
	}
	admin, ok, err := registration.CleanupCredentials(ctx, r.Client, api)
	if err != nil {
		return false, err
	}
	if !ok {
		s.round.MarkFalse(step, condition.DependencyNotFound, "removing the endpoints: %s", registration.AdminMissing(api))
		return false, fmt.Errorf("removing the endpoints of %s: %s", ep.Name, registration.AdminMissing(api))
	}
	s.admin = admin
	kc, err := r.Keystone.Get(ctx, admin)
	if err == nil {
		err = kc.DeleteEndpoints(ctx, identity.EndpointSet{ServiceID: serviceID, Owner: owner(ep), Known: ep.Status.EndpointIDs})
	}
	if err != nil {
		_, err = registration.Failed(s.round, r.Keystone, admin, step, endpointFailed, err)
		return false, fmt.Errorf("removing the endpoints of %s: %w", ep.Name, err)
	}
	return true, nil
}
