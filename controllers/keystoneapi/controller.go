package keystoneapi

import (
	"context"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Kind is the reported kind.
const Kind = "KeystoneAPI"

var steps = condition.Steps(keystonev1.KeystoneAPISteps)

// Reconciler reconciles a KeystoneAPI.
type Reconciler struct {
	client.Client
	Reporter condition.Reporter
	Clock    clock.PassiveClock
}

// scope is what one reconcile of a KeystoneAPI has seen so far.
type scope struct {
	api   *keystonev1.KeystoneAPI
	round *condition.Round
}

// +kubebuilder:rbac:groups=keystone.openstack.org,resources=keystoneapis,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=keystone.openstack.org,resources=keystoneapis/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=keystone.openstack.org,resources=keystoneapis/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// SetupWithManager registers the controller and its watches.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&keystonev1.KeystoneAPI{}).
		Complete(r)
}

// Reconcile runs the steps of a KeystoneAPI in order and reports them.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, err error) {
	api := &keystonev1.KeystoneAPI{}
	if err := r.Get(ctx, req.NamespacedName, api); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	base := api.DeepCopy()
	s := &scope{api: api, round: steps.Begin(api.Status.Conditions, r.Clock.Now(), skippedSteps(api)...)}
	defer func() {
		_, err = r.Reporter.Finish(ctx, api, base, condition.Status{
			Conditions: &api.Status.Conditions, ObservedGeneration: &api.Status.ObservedGeneration,
		}, s.round, err)
	}()
	return condition.RunPhases(ctx, s.round, s, r.phases())
}

// phases lists the steps of a KeystoneAPI in declared order.
func (r *Reconciler) phases() []condition.Phase[*scope] {
	return nil
}

// skippedSteps lists the steps that do not apply to the spec: in external mode only
// the input and the endpoint check run; otherwise the endpoint check is the
// deployment's own readiness.
func skippedSteps(api *keystonev1.KeystoneAPI) []lc.Type {
	if !api.Spec.ExternalKeystoneAPI {
		return []lc.Type{keystonev1.KeystoneAPIEndpointReady}
	}
	var skip []lc.Type
	for _, t := range keystonev1.KeystoneAPISteps {
		if t != keystonev1.KeystoneAPIInputReady && t != keystonev1.KeystoneAPIEndpointReady {
			skip = append(skip, t)
		}
	}
	return skip
}
