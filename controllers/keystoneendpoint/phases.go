package keystoneendpoint

import (
	"context"
	"fmt"
	"github.com/keystone-stepwise/keystone-operator/internal/access"
	"sort"
	"strings"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/controllers/registration"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/internal/finalizers"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
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

// reconcileKeystoneAPI marks KeystoneAPIReady: it mirrors the namespace's KeystoneAPI
// and reads its admin's credentials. It puts no finalizer on it: the KeystoneService
// this endpoint holds keeps it, and waits for the endpoints to be removed first. When
// the KeystoneAPI is being deleted, the endpoints are removed where its Keystone stays
// (external mode), and the finalizers released.
func (r *Reconciler) reconcileKeystoneAPI(ctx context.Context, s *scope) (ctrl.Result, error) {
	step := keystonev1.KeystoneEndpointKeystoneAPIReady
	api, usable, err := registration.MirrorKeystoneAPI(ctx, r.Client, s.Round, step, s.endpoint.Namespace)
	s.found = api
	switch {
	case err != nil:
		return ctrl.Result{}, err
	case api != nil && !api.DeletionTimestamp.IsZero():
		return ctrl.Result{}, r.leave(ctx, s, api)
	case !usable:
		return ctrl.Result{}, nil
	}
	admin, ok, err := access.Credentials(ctx, r.Client, api)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !ok {
		s.Round.MarkFalse(step, condition.DependencyNotFound, "%s", access.Missing(api))
		return ctrl.Result{}, nil
	}
	s.API, s.Admin = api, admin
	return ctrl.Result{}, nil
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
	held, err := r.held(ctx, ep)
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

// keystoneService returns the KeystoneService of spec.serviceName: the object of that
// name (the upstream helpers name it after its serviceName), else the one whose
// spec.serviceName it is; nil when there is none.
func (r *Reconciler) keystoneService(ctx context.Context, ep *keystonev1.KeystoneEndpoint) (*keystonev1.KeystoneService, error) {
	svc := &keystonev1.KeystoneService{}
	err := r.Get(ctx, client.ObjectKey{Namespace: ep.Namespace, Name: ep.Spec.ServiceName}, svc)
	if err == nil {
		return svc, nil
	}
	if !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("reading KeystoneService %s: %w", ep.Spec.ServiceName, err)
	}
	list := &keystonev1.KeystoneServiceList{}
	if err := r.List(ctx, list, client.InNamespace(ep.Namespace)); err != nil {
		return nil, fmt.Errorf("listing KeystoneServices: %w", err)
	}
	for i := range list.Items {
		if list.Items[i].Spec.ServiceName == ep.Spec.ServiceName {
			return &list.Items[i], nil
		}
	}
	return nil, nil
}

// reconcileService marks KeystoneServiceReady: it mirrors the KeystoneService of
// spec.serviceName, takes its service ID and puts a finalizer on it. Every round, even
// while the KeystoneAPI is not ready, it lets go of the KeystoneServices it holds and
// should not: one being deleted waits for nobody (the endpoints under it are removed
// with the cleanup credentials, and the finalizer released), and one that
// spec.serviceName no longer names is released once no endpoint of ours is left under it.
func (r *Reconciler) reconcileService(ctx context.Context, s *scope) (ctrl.Result, error) {
	step := keystonev1.KeystoneEndpointServiceReady
	ep := s.endpoint
	svc, err := r.keystoneService(ctx, ep)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.releaseUnused(ctx, s, svc); err != nil {
		return ctrl.Result{}, err
	}
	switch {
	case svc != nil && !svc.DeletionTimestamp.IsZero():
		if err := r.leaveService(ctx, s, svc); err != nil {
			return ctrl.Result{}, err
		}
		s.Round.MarkFalse(step, condition.DependencyNotFound, "KeystoneService %s is being deleted; its endpoints are removed", svc.Name)
		return ctrl.Result{}, nil
	case s.Round.WaitingFor(step) != "":
		return ctrl.Result{}, nil
	case svc == nil:
		s.Round.MarkFalse(step, condition.DependencyNotFound, "KeystoneService %s not found", ep.Spec.ServiceName)
		return ctrl.Result{}, nil
	}
	if s.Round.MirrorSteady(step, "KeystoneService", svc.Name, svc.Status.Conditions); !s.Round.IsTrue(step) {
		return ctrl.Result{}, nil
	}
	if !svc.IsReady() || svc.Status.ServiceID == "" {
		s.Round.MarkFalse(step, condition.Requested, "KeystoneService %s: waiting for its current generation to be registered", svc.Name)
		return ctrl.Result{}, nil
	}
	s.service = svc
	return ctrl.Result{}, finalizers.Add(ctx, r.Client, svc, holdFinalizer(ep))
}

// leaveService removes this KeystoneEndpoint's endpoints under svc from a Keystone that
// stays (with the cleanup credentials: the KeystoneAPI need not be ready), forgets them,
// and releases svc.
func (r *Reconciler) leaveService(ctx context.Context, s *scope, svc *keystonev1.KeystoneService) error {
	ep := s.endpoint
	if api := s.found; api != nil && registration.KeystoneStays(api) && holds(ep, svc) && endpointsUnder(ep, svc) {
		if err := r.deregister(ctx, s, api, svc); err != nil {
			return err
		}
	}
	if endpointsUnder(ep, svc) {
		ep.Status.ServiceID, ep.Status.EndpointIDs, ep.Status.Endpoints = "", nil, nil
	}
	return finalizers.Remove(ctx, r.Client, svc, holdFinalizer(ep), upstreamHoldFinalizer(ep))
}

// releaseUnused lets go of every KeystoneService of the namespace this KeystoneEndpoint
// holds but spec.serviceName no longer names (current), after removing what it may
// hold of ours (leaveService). While the status records our endpoints under it and it
// is not being deleted, reconcileEndpoints moves them to the current service first.
func (r *Reconciler) releaseUnused(ctx context.Context, s *scope, current *keystonev1.KeystoneService) error {
	ep := s.endpoint
	held, err := r.held(ctx, ep)
	if err != nil {
		return err
	}
	for _, svc := range held {
		if current != nil && svc.UID == current.UID {
			continue
		}
		if ep.Status.ServiceID != "" && ep.Status.ServiceID == svc.Status.ServiceID && svc.DeletionTimestamp.IsZero() {
			continue
		}
		if err := r.leaveService(ctx, s, svc); err != nil {
			return err
		}
	}
	return nil
}

// held returns the KeystoneServices of the namespace this KeystoneEndpoint holds, found
// by its finalizers in the cache's index (not by listing every KeystoneService).
func (r *Reconciler) held(ctx context.Context, ep *keystonev1.KeystoneEndpoint) ([]*keystonev1.KeystoneService, error) {
	var out []*keystonev1.KeystoneService
	seen := map[types.UID]bool{}
	for _, f := range []string{holdFinalizer(ep), upstreamHoldFinalizer(ep)} {
		list := &keystonev1.KeystoneServiceList{}
		if err := r.List(ctx, list, client.InNamespace(ep.Namespace), client.MatchingFields{finalizerIndex: f}); err != nil {
			return nil, fmt.Errorf("listing the KeystoneServices held by %s: %w", f, err)
		}
		for i := range list.Items {
			if !seen[list.Items[i].UID] {
				seen[list.Items[i].UID] = true
				out = append(out, &list.Items[i])
			}
		}
	}
	return out, nil
}

// holds tells whether the KeystoneEndpoint holds obj with its finalizer (or keystone-operator's).
func holds(ep *keystonev1.KeystoneEndpoint, obj client.Object) bool {
	return controllerutil.ContainsFinalizer(obj, holdFinalizer(ep)) || controllerutil.ContainsFinalizer(obj, upstreamHoldFinalizer(ep))
}

// endpointsUnder tells whether the status records endpoints of this KeystoneEndpoint
// under svc's service in Keystone (or may: a crash before the first status write).
func endpointsUnder(ep *keystonev1.KeystoneEndpoint, svc *keystonev1.KeystoneService) bool {
	return ep.Status.ServiceID == "" || ep.Status.ServiceID == svc.Status.ServiceID
}

// reconcileEndpoints marks KeystoneServiceOSEndpointsReady: this KeystoneEndpoint's
// endpoints are exactly the spec's, in the KeystoneAPI's region; the status lists them.
func (r *Reconciler) reconcileEndpoints(ctx context.Context, s *scope) (ctrl.Result, error) {
	step := keystonev1.KeystoneEndpointEndpointsReady
	ep := s.endpoint
	if problem, pending := invalidEndpoints(ep.Spec.Endpoints); problem != "" {
		// Not validated at admission (keystone-operator's schema does not either). A URL
		// without a host yet is its service operator's moment before its Route has one.
		reason := condition.InvalidInput
		if pending {
			reason = condition.Requested
		}
		s.Round.MarkFalse(step, reason, "%s", problem)
		return ctrl.Result{}, nil
	}
	region := registration.Region(s.API)
	message := fmt.Sprintf("%s in region %s", describe(ep.Spec.Endpoints), region)
	inputs := r.inputs(s, region)
	if r.Recent.Matches(ep.UID, inputs, r.Clock.Now()) {
		s.Round.MarkTrue(step, "%s", message)
		return ctrl.Result{}, nil
	}
	r.Recent.Forget(ep.UID)
	kc, err := r.Keystone.Get(ctx, s.Admin)
	if err != nil {
		return s.Failed(step, endpointFailed, err)
	}
	changedService := false
	if previous := ep.Status.ServiceID; previous != "" && previous != s.service.Status.ServiceID {
		// The KeystoneService registered another service (a new type or name): our
		// endpoints of the previous one go, unless they went with it.
		err := kc.DeleteEndpoints(ctx, identity.EndpointSet{ServiceID: previous, Owner: r.owner(ep), Known: ep.Status.EndpointIDs})
		if err != nil {
			return s.Failed(step, endpointFailed, err)
		}
		changedService = true
	}
	ids, changed, err := kc.EnsureEndpoints(ctx, identity.EndpointSet{
		ServiceID: s.service.Status.ServiceID, Region: region, Owner: r.owner(ep), URLs: ep.Spec.Endpoints,
		Known: knownIDs(ep, s.service.Status.ServiceID),
	})
	if err != nil {
		return s.Failed(step, endpointFailed, err)
	}
	setStatus(ep, s.service.Status.ServiceID, ids)
	if changedService {
		// No endpoint of ours is left under the previous service: let it go.
		if err := r.releaseUnused(ctx, s, s.service); err != nil {
			return ctrl.Result{}, err
		}
	}
	s.Mark(ctx, step, changed || changedService, "%s", message)
	r.Recent.Record(ep.UID, r.inputs(s, region), r.Clock.Now())
	return ctrl.Result{}, nil
}

// inputs is everything a finding of reconcileEndpoints depends on (registration.Recent):
// the spec, the annotations (touching one forces a read of Keystone), the status it
// was written to, the service, the region, the KeystoneAPI's readiness and its admin.
func (r *Reconciler) inputs(s *scope, region string) string {
	ep := s.endpoint
	var readySince int64
	if ready := s.API.Status.Conditions.Get(condition.ReadyCondition); ready != nil {
		readySince = ready.LastTransitionTime.UnixNano()
	}
	return fmt.Sprint(ep.Generation, ep.Annotations, ep.Status.ServiceID, ep.Status.EndpointIDs, s.service.UID,
		s.service.Status.ServiceID, region, s.API.UID, readySince, s.Admin.Fingerprint())
}

// knownIDs are the endpoint IDs recorded for the current service: none when the
// service was registered anew (the old endpoints were removed with it or before).
func knownIDs(ep *keystonev1.KeystoneEndpoint, serviceID string) map[string]string {
	if ep.Status.ServiceID != serviceID {
		return nil
	}
	return ep.Status.EndpointIDs
}

func setStatus(ep *keystonev1.KeystoneEndpoint, serviceID string, ids map[string]string) {
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
		ep.Status.Endpoints = append(ep.Status.Endpoints, keystonev1.Endpoint{Interface: iface, URL: ep.Spec.Endpoints[iface], ID: ids[iface]})
	}
}

// describe lists interfaces and URLs, sorted: "internal http://..., public https://...".
func describe(urls map[string]string) string {
	if len(urls) == 0 {
		return "no endpoints"
	}
	parts := make([]string, 0, len(urls))
	for iface, u := range urls {
		parts = append(parts, iface+" "+u)
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// invalidEndpoints says what is wrong with the endpoints, "" when nothing; pending
// when all that is wrong is a URL without a host yet ("http://").
func invalidEndpoints(urls map[string]string) (problem string, pending bool) {
	var hostless []string
	for _, iface := range sortedKeys(urls) {
		switch iface {
		case keystonev1.EndpointPublic, keystonev1.EndpointInternal, keystonev1.EndpointAdmin:
		default:
			return fmt.Sprintf("endpoint interface %q is not public, internal or admin", iface), false
		}
		switch {
		case deploy.HostlessURL(urls[iface]):
			hostless = append(hostless, fmt.Sprintf("the %s endpoint %q", iface, urls[iface]))
		case !deploy.AbsoluteHTTP(urls[iface]):
			return fmt.Sprintf("the %s endpoint %q is not an absolute http or https URL, for example http://glance-internal.openstack.svc:9292",
				iface, urls[iface]), false
		}
	}
	if len(hostless) > 0 {
		return fmt.Sprintf("waiting for a host in %s (its operator sets it once its Route has one)", strings.Join(hostless, " and ")), true
	}
	return "", false
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
