package keystoneservice

import (
	"context"
	"fmt"
	"slices"
	"strings"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/controllers/registration"
	"github.com/keystone-stepwise/keystone-operator/internal/access"
	"github.com/keystone-stepwise/keystone-operator/internal/finalizers"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// reconcileDelete removes the registration from Keystone (the service, with the
// endpoints Keystone keeps under it, and the user), then the finalizers. While
// KeystoneEndpoints still hold finalizers on it, it waits: their endpoints are
// removed first. A KeystoneAPI that is gone or being deleted takes its Keystone
// with it (external mode aside): then the finalizers are released without
// deregistering.
func (r *Reconciler) reconcileDelete(ctx context.Context, s *scope) (ctrl.Result, error) {
	svc := s.service
	api, err := access.Lookup(ctx, r.Client, svc.Namespace)
	if err != nil {
		return ctrl.Result{}, err
	}
	if api != nil && registration.KeystoneStays(api) {
		if waiting, err := r.waitForEndpoints(ctx, s, keystonev1.KeystoneServiceServiceReady, "deleting"); err != nil || waiting {
			return ctrl.Result{}, err
		}
		if registered(s, api) {
			done, err := r.deregister(ctx, s, api)
			if err != nil || !done {
				return ctrl.Result{}, err
			}
		}
	}
	if err := registration.Release(ctx, r.Client, svc.Namespace, apiFinalizer(svc), finalizers.Upstream("keystoneservice", svc.Name)); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, finalizers.Remove(ctx, r.Client, svc, Finalizer, finalizers.UpstreamOwn("keystoneservice"))
}

// waitForEndpoints marks step False while KeystoneEndpoints hold this KeystoneService
// (holdFinalizer): their endpoints are removed before the registration and the
// KeystoneAPI go, even where the service itself stays in Keystone (adopted). A hold of
// a KeystoneEndpoint that no longer exists is released. Releasing a hold, or a
// KeystoneEndpoint's deletion, wakes the KeystoneService (endpointReleased, wakeHeld).
func (r *Reconciler) waitForEndpoints(ctx context.Context, s *scope, step lc.Type, why string) (bool, error) {
	// A KeystoneEndpoint removed without releasing it holds it no more.
	released, err := finalizers.ReleaseOrphaned(ctx, r.Client, r.Uncached(), s.service, "keystoneendpoint", &keystonev1.KeystoneEndpointList{})
	if err != nil {
		return false, err
	}
	for _, f := range released {
		r.Reporter.Recorder.Eventf(s.service, corev1.EventTypeWarning, "FinalizerReleased",
			"released finalizer %s: the KeystoneEndpoint that put it there no longer exists", f)
	}
	holders := finalizers.Holders(s.service, "keystoneendpoint")
	if len(holders) == 0 {
		return false, nil
	}
	s.Round.Apply(step, endpointsHoldVerdict(why, holders))
	return true, nil
}

// registered tells whether the KeystoneService may have registered anything: it puts
// its finalizer on the KeystoneAPI before its first request to Keystone.
func registered(s *scope, api *keystonev1.KeystoneAPI) bool {
	return controllerutil.ContainsFinalizer(api, apiFinalizer(s.service)) ||
		controllerutil.ContainsFinalizer(api, finalizers.Upstream("keystoneservice", s.service.Name))
}

// deregister deletes what the KeystoneService registered and owns (identity.Owned: the
// service and user it created, or claimed from keystone-operator), with the admin's
// credentials alone; what it adopted stays, and so does a user another KeystoneService
// of the namespace still names (handed over to it: shared.go). done is false, with the step saying why,
// when it cannot yet.
func (r *Reconciler) deregister(ctx context.Context, s *scope, api *keystonev1.KeystoneAPI) (done bool, err error) {
	step := keystonev1.KeystoneServiceServiceReady
	missing, err := s.OpenCleanup(ctx, r.Client, step, api, "deleting")
	if err != nil {
		return false, err
	}
	if missing != nil {
		err := r.giveUp(s, api, fmt.Errorf("deregistering %s: %w", s.service.Spec.ServiceName, missing))
		return err == nil, err
	}
	admin := s.Admin
	kc, err := r.Keystone.Get(ctx, admin)
	if err != nil {
		_, err = s.FailedAs(admin, step, failedReasons[step], err)
		err = r.giveUp(s, api, err)
		return err == nil, err
	}
	svc := s.service
	spec := svc.Spec
	// What the KeystoneAPI does not (or no longer) let the namespace name goes only when
	// it carries this very object's mark (registered before the policy changed): a
	// predecessor's of the same namespace and name, which a recycled namespace would
	// inherit, claims nothing there. The admin user is never removed.
	service := identity.ServiceSpec{Type: spec.ServiceType, Name: spec.ServiceName, Owner: r.owner(svc),
		Claim:       s.claimsService(api, svc.Status.ServiceID),
		OwnMarkOnly: registration.ServiceRefusal(api, spec.ServiceType, spec.ServiceName) != ""}
	user := identity.UserSpec{Name: spec.ServiceUser, DomainID: defaultDomainID, Owner: r.owner(svc),
		ClaimUnmarked: s.claimsUser(api, spec.ServiceUser),
		OwnMarkOnly:   registration.UserRefusal(api, "spec.serviceUser", spec.ServiceUser) != ""}
	if strings.EqualFold(spec.ServiceUser, api.Spec.AdminUser) {
		user.Name = ""
	}
	// A user recorded under another name is one a change of serviceUser had not yet
	// removed, and so is one keystone-operator registered under a name the spec no
	// longer has; each stays, handed over, while another KeystoneService names it.
	userID, err := r.legacyUserID(ctx, kc, api, svc)
	if err == nil && user.Name != "" {
		kept, herr := r.handOver(ctx, kc, api, svc, user.Name, user.ClaimUnmarked)
		if err = herr; kept {
			user.Name, userID = "", ""
		}
	}
	for _, other := range s.otherUsers() {
		if err != nil {
			break
		}
		err = r.removeUser(ctx, s, kc, api, other, registration.UserRefusal(api, "", other) != "")
	}
	// The service keystone-operator recorded, if the round that moved to another did not remove it.
	if proven := s.provenService(); err == nil && proven != svc.Status.ServiceID {
		err = kc.DeleteService(ctx, proven, r.owner(svc), s.claimsService(api, proven))
	}
	if err == nil {
		err = kc.DeleteRegistration(ctx, svc.Status.ServiceID, service, userID, user)
	}
	if err != nil {
		_, err = s.FailedAs(admin, step, failedReasons[step], err)
		err = r.giveUp(s, api, fmt.Errorf("deregistering %s: %w", spec.ServiceName, err))
		return err == nil, err
	}
	return true, nil
}

// legacyUserID is the user ID an earlier version recorded on svc (an annotation a
// namespace user may write), "" when none, or when it is a user the KeystoneAPI does
// not let the namespace name.
func (r *Reconciler) legacyUserID(ctx context.Context, kc *identity.Client, api *keystonev1.KeystoneAPI,
	svc *keystonev1.KeystoneService) (string, error) {
	id := svc.Annotations[legacyUserIDAnnotation]
	if id == "" {
		return "", nil
	}
	u, err := kc.GetUser(ctx, id)
	if err != nil || u == nil || registration.UserRefusal(api, "", u.Name) != "" {
		return "", err
	}
	return id, nil
}

// otherUsers are the users this KeystoneService may have registered under a name that
// is not its spec's serviceUser: the one UserAnnotation records (a change of
// serviceUser not carried out yet) and the one keystone-operator registered
// (provenUser), each once.
func (s *scope) otherUsers() []string {
	var out []string
	for _, name := range []string{s.service.Annotations[UserAnnotation], s.provenUser()} {
		if name != "" && name != s.service.Spec.ServiceUser && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// removeUser removes the user name when it is this KeystoneService's (owned, or
// claimed on keystone-operator's proof) and no other KeystoneService of the namespace
// names it (handed over to it, then: shared.go); keystone-operator's proof of it is
// dropped once it is settled. With ownMarkOnly (a name the KeystoneAPI does not let the
// namespace use), only a user carrying this very object's mark goes.
func (r *Reconciler) removeUser(ctx context.Context, s *scope, kc *identity.Client, api *keystonev1.KeystoneAPI, name string,
	ownMarkOnly bool) error {
	if ownMarkOnly {
		// A name the KeystoneAPI does not let the namespace use: only what this very
		// object marked goes (registration.UserRefusal).
		return kc.DeleteRegistration(ctx, "", identity.ServiceSpec{}, "", identity.UserSpec{Name: name, DomainID: defaultDomainID,
			Owner: r.owner(s.service), OwnMarkOnly: true})
	}
	claim := s.claimsUser(api, name)
	kept, err := r.handOver(ctx, kc, api, s.service, name, claim)
	if err == nil && !kept {
		err = kc.DeleteUserNamed(ctx, defaultDomainID, name, r.owner(s.service), claim)
	}
	if err == nil {
		s.claimed(upstreamUserReady, name, true)
	}
	return err
}

// giveUp ends a deregistration that failed with err (registration.GiveUp): what stays in
// Keystone is the service and the user this KeystoneService owns.
func (r *Reconciler) giveUp(s *scope, api *keystonev1.KeystoneAPI, err error) error {
	spec := s.service.Spec
	what := fmt.Sprintf("service %s (%s) %s and user %s", spec.ServiceName, spec.ServiceType, s.service.Status.ServiceID, spec.ServiceUser)
	return s.GiveUp(keystonev1.KeystoneServiceServiceReady, s.service, api, what, err)
}

// release removes this KeystoneService's finalizers (its own and keystone-operator's
// name for it) from the KeystoneAPI being deleted.
func (r *Reconciler) release(ctx context.Context, s *scope, api *keystonev1.KeystoneAPI) error {
	return finalizers.Remove(ctx, r.Client, api, apiFinalizer(s.service), finalizers.Upstream("keystoneservice", s.service.Name))
}
