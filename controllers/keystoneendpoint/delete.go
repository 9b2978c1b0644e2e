package keystoneendpoint

import (
	"context"
	"fmt"
	"strings"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/controllers/keystoneservice"
	"github.com/keystone-stepwise/keystone-operator/controllers/registration"
	"github.com/keystone-stepwise/keystone-operator/internal/access"
	"github.com/keystone-stepwise/keystone-operator/internal/finalizers"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// reconcileDelete removes this KeystoneEndpoint's endpoints from Keystone, then its
// finalizers on the KeystoneService (and, from earlier versions, the KeystoneAPI), then
// its own. A KeystoneAPI that is gone, or being deleted with its Keystone, takes the
// endpoints with it.
func (r *Reconciler) reconcileDelete(ctx context.Context, s *scope) (ctrl.Result, error) {
	api, err := access.Lookup(ctx, r.Client, s.endpoint.Namespace)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.leave(ctx, s, api); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, finalizers.Remove(ctx, r.Client, s.endpoint, Finalizer, finalizers.UpstreamOwn("keystoneendpoint"))
}

// deregister deletes this KeystoneEndpoint's endpoints, with the admin's credentials
// alone; when it cannot yet, the step says why and the error is returned.
func (r *Reconciler) deregister(ctx context.Context, s *scope, api *keystonev1.KeystoneAPI, svc *keystonev1.KeystoneService) error {
	step := keystonev1.KeystoneEndpointEndpointsReady
	ep := s.endpoint
	serviceID := ep.Status.ServiceID
	if serviceID == "" && svc != nil {
		// A crash before the first status write: the service's ID is the KeystoneService's.
		serviceID = svc.Status.ServiceID
	}
	if serviceID == "" {
		return nil
	}
	missing, err := s.OpenCleanup(ctx, r.Client, step, api, "removing the endpoints")
	if err != nil {
		return err
	}
	if missing != nil {
		return r.giveUp(s, api, svc, serviceID, fmt.Errorf("removing the endpoints of %s: %w", ep.Name, missing))
	}
	admin := s.Admin
	kc, err := r.Keystone.Get(ctx, admin)
	var known map[string]string
	if err == nil {
		known, err = r.knownUnder(ctx, kc, api, svc, serviceID, ep.Status.EndpointIDs)
	}
	if err == nil {
		err = kc.DeleteEndpoints(ctx, identity.EndpointSet{ServiceID: serviceID, Owner: r.owner(ep), Known: known})
	}
	if err != nil {
		_, err = s.FailedAs(admin, step, endpointFailed, err)
		return r.giveUp(s, api, svc, serviceID, fmt.Errorf("removing the endpoints of %s: %w", ep.Name, err))
	}
	return nil
}

// giveUp ends a removal that failed with err (registration.GiveUp): what stays in
// Keystone is this KeystoneEndpoint's endpoints under serviceID. The annotation on their
// KeystoneService (svc, nil when none) lets them go too.
func (r *Reconciler) giveUp(s *scope, api *keystonev1.KeystoneAPI, svc *keystonev1.KeystoneService, serviceID string, err error) error {
	ep := s.endpoint
	what := fmt.Sprintf("endpoints %s of service %s", describeIDs(ep.Status.EndpointIDs), serviceID)
	var also []client.Object
	if svc != nil {
		also = append(also, svc)
	}
	return s.GiveUp(keystonev1.KeystoneEndpointEndpointsReady, ep, api, what, err, also...)
}

// describeIDs lists endpoint IDs by interface, sorted: "internal=ID1, public=ID2"; "(IDs
// unknown)" when none is recorded.
func describeIDs(ids map[string]string) string {
	if len(ids) == 0 {
		return "(IDs not recorded)"
	}
	parts := make([]string, 0, len(ids))
	for _, iface := range sortedKeys(ids) {
		parts = append(parts, iface+"="+ids[iface])
	}
	return strings.Join(parts, ", ")
}

// leave removes the endpoints from a Keystone that stays and releases the finalizers
// this KeystoneEndpoint holds on KeystoneServices and the KeystoneAPI: it runs when
// the endpoint (deleted) or the KeystoneAPI (being deleted) goes. api may be nil.
func (r *Reconciler) leave(ctx context.Context, s *scope, api *keystonev1.KeystoneAPI) error {
	ep := s.endpoint
	svc, err := r.keystoneService(ctx, ep)
	if err != nil {
		return err
	}
	if api != nil && registration.KeystoneStays(api) && registered(ep, api, svc) {
		if err := r.deregister(ctx, s, api, svc); err != nil {
			return err
		}
	}
	held, err := keystoneservice.HeldBy(ctx, r.Client, ep.Namespace, ep.Name)
	if err != nil {
		return err
	}
	for _, svc := range held {
		if err := finalizers.Remove(ctx, r.Client, svc, holdFinalizer(ep), upstreamHoldFinalizer(ep)); err != nil {
			return err
		}
	}
	return registration.Release(ctx, r.Client, ep.Namespace, holdFinalizer(ep), upstreamHoldFinalizer(ep))
}

// registered tells whether the KeystoneEndpoint may have registered endpoints: it
// holds its KeystoneService before its first request to Keystone (earlier versions,
// and keystone-operator, held the KeystoneAPI).
func registered(ep *keystonev1.KeystoneEndpoint, api *keystonev1.KeystoneAPI, svc *keystonev1.KeystoneService) bool {
	return holds(ep, api) || (svc != nil && holds(ep, svc))
}
