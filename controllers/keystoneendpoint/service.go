package keystoneendpoint

import (
	"context"
	"fmt"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/controllers/keystoneservice"
	"github.com/keystone-stepwise/keystone-operator/controllers/registration"
	"github.com/keystone-stepwise/keystone-operator/internal/finalizers"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

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

// reconcileService marks KeystoneServiceReady (serviceVerdict): it mirrors the
// KeystoneService of spec.serviceName, takes its service ID and puts a finalizer on it.
// Every round, even while the KeystoneAPI is not ready, it lets go of the
// KeystoneServices it holds and should not: one being deleted waits for nobody (the
// endpoints under it are removed with the cleanup credentials, and the finalizer
// released), and one that spec.serviceName no longer names is released once no endpoint
// of ours is left under it.
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
	if svc != nil && !svc.DeletionTimestamp.IsZero() {
		if err := r.leaveService(ctx, s, svc); err != nil {
			return ctrl.Result{}, err
		}
	} else if s.Round.WaitingFor(step) != "" {
		return ctrl.Result{}, nil
	}
	v := serviceVerdict(ep.Spec.ServiceName, svc)
	if s.Round.Apply(step, v); !v.True {
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
	held, err := keystoneservice.HeldBy(ctx, r.Client, ep.Namespace, ep.Name)
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

// holds tells whether the KeystoneEndpoint holds obj with its finalizer (or keystone-operator's).
func holds(ep *keystonev1.KeystoneEndpoint, obj client.Object) bool {
	return controllerutil.ContainsFinalizer(obj, holdFinalizer(ep)) || controllerutil.ContainsFinalizer(obj, upstreamHoldFinalizer(ep))
}

// endpointsUnder tells whether the status records endpoints of this KeystoneEndpoint
// under svc's service in Keystone (or may: a crash before the first status write).
func endpointsUnder(ep *keystonev1.KeystoneEndpoint, svc *keystonev1.KeystoneService) bool {
	return ep.Status.ServiceID == "" || ep.Status.ServiceID == svc.Status.ServiceID
}
