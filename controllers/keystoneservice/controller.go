package keystoneservice

import (
	"context"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Kind is the reported kind.
const Kind = "KeystoneService"

var steps = condition.Steps(keystonev1.KeystoneServiceSteps)

// Reconciler reconciles a KeystoneService.
type Reconciler struct {
	client.Client
	Reporter condition.Reporter
	Clock    clock.PassiveClock
}

// scope is what one reconcile of a KeystoneService has seen so far.
type scope struct {
	service *keystonev1.KeystoneService
	round   *condition.Round
}

// +kubebuilder:rbac:groups=keystone.openstack.org,resources=keystoneservices,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=keystone.openstack.org,resources=keystoneservices/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=keystone.openstack.org,resources=keystoneservices/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// SetupWithManager registers the controller and its watches.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&keystonev1.KeystoneService{}).
		Complete(r)
}

// Reconcile runs the registration steps of a KeystoneService in order and reports them.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, err error) {
	svc := &keystonev1.KeystoneService{}
	if err := r.Reporter.Get(ctx, req.NamespacedName, svc); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	base := svc.DeepCopy()
	s := &scope{service: svc, round: steps.Begin(svc.Status.Conditions, r.Clock.Now())}
	defer func() {
		_, err = r.Reporter.Finish(ctx, svc, base, condition.Status{
			Conditions: &svc.Status.Conditions, ObservedGeneration: &svc.Status.ObservedGeneration,
		}, s.round, err)
	}()
	return condition.RunPhases(ctx, s.round, s, r.phases())
}

// phases lists the registration steps of a KeystoneService in declared order.
func (r *Reconciler) phases() []condition.Phase[*scope] {
	return nil
}
