package keystoneservice

import (
	"context"
	"errors"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
)

// reconcileService marks KeystoneServiceReady (serviceVerdict): the service exists with
// the spec's description and enabled flag; status.serviceID. The service is created
// marked as this KeystoneService's, or adopted when it exists; after a change of
// serviceType or serviceName the previous one is removed when it was ours.
func (r *Reconciler) reconcileService(ctx context.Context, s *scope) (ctrl.Result, error) {
	step := keystonev1.KeystoneServiceServiceReady
	kc, err := r.Keystone.Get(ctx, s.Admin)
	if err != nil {
		return r.failed(s, step, err)
	}
	s.keystone = kc
	svc := s.service
	spec := svc.Spec
	reg, changed, err := kc.EnsureService(ctx, svc.Status.ServiceID, identity.ServiceSpec{
		Type: spec.ServiceType, Name: spec.ServiceName, Description: spec.ServiceDescription, Enabled: ptr.Deref(spec.Enabled, true),
		Owner: r.owner(svc), Claim: s.claimsService(s.API, svc.Status.ServiceID),
	})
	var foreign *identity.ForeignError
	var differs *identity.DefinitionConflictError
	var taken *identity.TypeTakenError
	if errors.As(err, &foreign) || errors.As(err, &differs) || errors.As(err, &taken) {
		s.Round.Apply(step, serviceVerdict(spec, reg, err))
		return ctrl.Result{}, nil
	}
	if err != nil {
		return r.failed(s, step, err)
	}
	// Its first service, created now: its first registration (newUser).
	s.firstService = reg.Created && svc.Status.ServiceID == ""
	if previous := svc.Status.ServiceID; previous != "" && previous != reg.ID {
		if err := kc.DeleteService(ctx, previous, r.owner(svc), s.claimsService(s.API, previous)); err != nil {
			return r.failed(s, step, err)
		}
		s.claimed(upstreamServiceReady, previous, true)
		changed = true
	}
	s.claimed(upstreamServiceReady, reg.ID, reg.Ownership == identity.Owned)
	svc.Status.ServiceID = reg.ID
	s.Mark(ctx, step, changed, serviceVerdict(spec, reg, nil))
	return ctrl.Result{}, nil
}
