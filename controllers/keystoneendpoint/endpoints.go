package keystoneendpoint

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/controllers/keystoneservice"
	"github.com/keystone-stepwise/keystone-operator/controllers/registration"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	ctrl "sigs.k8s.io/controller-runtime"
)

// reconcileEndpoints marks KeystoneServiceOSEndpointsReady (endpointsVerdict): this
// KeystoneEndpoint's endpoints are exactly the spec's, in the KeystoneAPI's region; the
// status lists them.
func (r *Reconciler) reconcileEndpoints(ctx context.Context, s *scope) (ctrl.Result, error) {
	step := keystonev1.KeystoneEndpointEndpointsReady
	ep := s.endpoint
	region := registration.Region(s.API)
	verdict := endpointsVerdict(ep.Spec.Endpoints, region)
	if !verdict.True || r.Recent.Matches(ep.UID, r.inputs(s, region), r.Clock.Now()) {
		s.Round.Apply(step, verdict)
		return ctrl.Result{}, nil
	}
	r.Recent.Forget(ep.UID)
	kc, err := r.Keystone.Get(ctx, s.Admin)
	if err != nil {
		return s.Failed(step, endpointFailed, err)
	}
	changedService, err := r.leavePrevious(ctx, s, kc)
	if err != nil {
		return s.Failed(step, endpointFailed, err)
	}
	refused, takes, err := r.serviceRefusal(ctx, s, kc)
	if err != nil || refused != "" {
		if err != nil {
			return s.Failed(step, endpointFailed, err)
		}
		s.Round.Apply(step, registration.NotAllowedVerdict(refused))
		return ctrl.Result{}, nil
	}
	var known map[string]string
	if takes {
		known = knownIDs(ep, s.service.Status.ServiceID)
	}
	// Under a service it does not take endpoints under (adopted), none goes beside another's.
	ids, changed, err := kc.EnsureEndpoints(ctx, identity.EndpointSet{
		ServiceID: s.service.Status.ServiceID, Region: region, Owner: r.owner(ep), URLs: ep.Spec.Endpoints, Known: known,
		Alone: !takes,
	})
	var beside *identity.EndpointBesideError
	if errors.As(err, &beside) {
		s.Round.Apply(step, registration.NotAllowedVerdict(fmt.Sprintf("service %s of KeystoneService %s: %v",
			s.service.Status.ServiceID, s.service.Name, beside)))
		// Keystone cannot be watched: looked at again for the other endpoint's removal.
		return ctrl.Result{RequeueAfter: BesideRecheckInterval}, nil
	}
	if err != nil {
		return s.Failed(step, endpointFailed, err)
	}
	setStatus(ep, s.service.Status.ServiceID, ids, region)
	if changedService {
		// No endpoint of ours is left under the previous service: let it go.
		if err := r.releaseUnused(ctx, s, s.service); err != nil {
			return ctrl.Result{}, err
		}
	}
	s.Mark(ctx, step, changed || changedService, verdict)
	r.Recent.Record(ep.UID, r.inputs(s, region), r.Clock.Now())
	return ctrl.Result{}, nil
}

// BesideRecheckInterval is how soon an endpoint refused beside another's of its
// interface and region (identity.EndpointBesideError) is looked at again.
const BesideRecheckInterval = time.Minute

// serviceRefusal says why no endpoint may go under the service of the KeystoneService
// (its status.serviceID): its namespace did not register it (it adopted a service that
// existed, unmarked: keystone-manage bootstrap's identity service, a service made by
// hand) and the KeystoneAPI does not list it in spec.registrationPolicy
// .adoptedServiceEndpoints; or it is another's. "" when endpoints may go there, or the
// service is gone (the write says so). takes tells whether the unmarked endpoints its
// status records there are its own (takesKnown).
func (r *Reconciler) serviceRefusal(ctx context.Context, s *scope, kc *identity.Client) (refused string, takes bool, err error) {
	svc, ownership, err := kc.ServiceOwnership(ctx, s.service.Status.ServiceID,
		identity.OwnerMark(keystoneservice.Kind, s.service, r.ClusterID))
	if err != nil || svc == nil {
		return "", false, err
	}
	return endpointServiceRefusal(s.API, s.service.Name, svc, ownership),
		takesKnown(s.API, s.service, svc, ownership), nil
}

// leavePrevious removes this KeystoneEndpoint's endpoints of the service its status
// names when its KeystoneService registered another since (a new type or name), unless
// they went with it; left tells that it did.
func (r *Reconciler) leavePrevious(ctx context.Context, s *scope, kc *identity.Client) (left bool, err error) {
	ep := s.endpoint
	previous := ep.Status.ServiceID
	if previous == "" || previous == s.service.Status.ServiceID {
		return false, nil
	}
	known, err := r.knownUnder(ctx, kc, s.API, s.service, previous, ep.Status.EndpointIDs)
	if err == nil {
		err = kc.DeleteEndpoints(ctx, identity.EndpointSet{ServiceID: previous, Owner: r.owner(ep), Known: known})
	}
	return err == nil, err
}

// takesKnown tells whether a KeystoneEndpoint takes as its own the unmarked endpoints
// its status records under service, which the mark of its KeystoneService ks relates to
// as ownership says: only under a service of their namespace, that is one ks registered or claimed (Owned) or shares with its other
// regions (Joined), one another KeystoneService of the namespace registered (its
// serviceName changed), or an unmarked one ks claims once its round comes
// (keystoneservice.ClaimsProven: at the switch from keystone-operator, before that
// round). keystone-operator recorded the endpoints it found and used (lib-common's
// CreateEndpoint takes any of the service's in the region for an interface: Keystone's
// own identity endpoints among them) as those it created, so under a service the
// namespace adopted, even one its KeystoneAPI lets endpoints go under, or another's,
// they stay whoever's they are: never rewritten, never removed. Those carrying the
// KeystoneEndpoint's mark are its own wherever they are.
func takesKnown(api *keystonev1.KeystoneAPI, ks *keystonev1.KeystoneService, service *identity.Service,
	ownership identity.Ownership) bool {
	switch ownership {
	case identity.Owned, identity.Joined:
		return true
	case identity.Adopted:
		return keystoneservice.ClaimsProven(ks, api, service)
	}
	m, ok := identity.ParseMark(service.Owner)
	return ok && m.Kind == keystoneservice.Kind && m.Namespace == ks.Namespace
}

// knownUnder is known, the endpoint IDs recorded under the service of ID serviceID,
// when the KeystoneEndpoint takes them (takesKnown) as the mark of its KeystoneService
// svc relates to that service; nil otherwise, and when svc or the service is gone (its
// endpoints went with it).
func (r *Reconciler) knownUnder(ctx context.Context, kc *identity.Client, api *keystonev1.KeystoneAPI,
	svc *keystonev1.KeystoneService, serviceID string, known map[string]string) (map[string]string, error) {
	if len(known) == 0 || svc == nil {
		return nil, nil
	}
	service, ownership, err := kc.ServiceOwnership(ctx, serviceID, identity.OwnerMark(keystoneservice.Kind, svc, r.ClusterID))
	if err != nil || service == nil || !takesKnown(api, svc, service, ownership) {
		return nil, err
	}
	return known, nil
}

// inputs is everything a finding of reconcileEndpoints depends on (registration.Recent):
// the spec, the annotations (touching one forces a read of Keystone), the status it
// was written to, the service, the region, the KeystoneAPI's readiness, what it lets
// endpoints go under, and its admin.
func (r *Reconciler) inputs(s *scope, region string) string {
	ep := s.endpoint
	var readySince int64
	if ready := s.API.Status.Conditions.Get(condition.ReadyCondition); ready != nil {
		readySince = ready.LastTransitionTime.UnixNano()
	}
	return fmt.Sprint(ep.Generation, ep.Annotations, ep.Status.ServiceID, ep.Status.EndpointIDs, s.service.UID,
		s.service.Status.ServiceID, region, s.API.UID, readySince, s.API.AdoptedEndpointsSetting(), s.Admin.Fingerprint())
}

// knownIDs are the endpoint IDs recorded for the current service: none when the
// service was registered anew (the old endpoints were removed with it or before).
func knownIDs(ep *keystonev1.KeystoneEndpoint, serviceID string) map[string]string {
	if ep.Status.ServiceID != serviceID {
		return nil
	}
	return ep.Status.EndpointIDs
}

func setStatus(ep *keystonev1.KeystoneEndpoint, serviceID string, ids map[string]string, region string) {
	ep.Status.ServiceID = serviceID
	ep.Status.EndpointIDs, ep.Status.Endpoints = nil, nil
	if len(ids) == 0 {
		return
	}
	ep.Status.EndpointIDs = ids
	ifaces := make([]string, 0, len(ids))
	for iface := range ids {
		ifaces = append(ifaces, iface)
	}
	sort.Strings(ifaces)
	for _, iface := range ifaces {
		ep.Status.Endpoints = append(ep.Status.Endpoints, keystonev1.Endpoint{Interface: iface, URL: ep.Spec.Endpoints[iface],
			ID: ids[iface], Region: region})
	}
}
