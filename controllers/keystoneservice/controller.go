package keystoneservice

import (
	"context"
	"fmt"
	"maps"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/finalizers"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	"github.com/keystone-stepwise/keystone-operator/pkg/identity"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Kind is the reported kind.
const Kind = "KeystoneService"

// Finalizer keeps a KeystoneService until its registration is removed from Keystone.
const Finalizer = "keystone.openstack.org/keystoneservice"

// ConfirmInterval is how soon a registration written to Keystone is read back to
// confirm it (Keystone cannot be watched).
const ConfirmInterval = 200 * time.Millisecond

// MaxConcurrentRegistrations is how many KeystoneServices reconcile at once.
const MaxConcurrentRegistrations = 4

const secretIndex = "spec.secret"

var steps = condition.Steps(keystonev1.KeystoneServiceSteps)

// Reconciler reconciles a KeystoneService.
type Reconciler struct {
	client.Client
	Reporter condition.Reporter
	Clock    clock.PassiveClock
	// Keystone shares authenticated clients between reconciles.
	Keystone *identity.Clients
}

// scope is what one reconcile of a KeystoneService has seen so far.
type scope struct {
	service  *keystonev1.KeystoneService
	round    *condition.Round
	api      *keystonev1.KeystoneAPI
	admin    identity.Credentials
	password string
	// passwordVersion identifies the Secret version the password was read from.
	passwordVersion string
	keystone        *identity.Client
	projectID       string
	userID          string
	roleIDs         map[string]string
}

// +kubebuilder:rbac:groups=keystone.openstack.org,resources=keystoneservices,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=keystone.openstack.org,resources=keystoneservices/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=keystone.openstack.org,resources=keystoneservices/finalizers,verbs=update
// +kubebuilder:rbac:groups=keystone.openstack.org,resources=keystoneapis,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// SetupWithManager registers the controller and its watches: the namespace's
// KeystoneAPI wakes every KeystoneService of the namespace, a Secret those that read it.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &keystonev1.KeystoneService{}, secretIndex,
		func(o client.Object) []string { return []string{o.(*keystonev1.KeystoneService).Spec.Secret} }); err != nil {
		return fmt.Errorf("indexing KeystoneService by secret: %w", err)
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&keystonev1.KeystoneService{}, builder.WithPredicates(condition.IgnoreStatusUpdates)).
		// Registrations wait on Keystone, not on the CPU: several run at once.
		WithOptions(controller.Options{MaxConcurrentReconciles: MaxConcurrentRegistrations}).
		Watches(&keystonev1.KeystoneAPI{}, r.enqueueNamespace(nil), builder.WithPredicates(keystoneAPIChanged)).
		Watches(&corev1.Secret{}, r.enqueueNamespace(func(o client.Object) client.ListOption {
			return client.MatchingFields{secretIndex: o.GetName()}
		})).
		Complete(r)
}

// keystoneAPIChanged passes the KeystoneAPI updates a KeystoneService depends on:
// Ready, the generation it describes, the endpoints, deletion. Not, for example, the
// finalizers the KeystoneServices themselves add.
var keystoneAPIChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*keystonev1.KeystoneAPI)
		n, ok2 := e.ObjectNew.(*keystonev1.KeystoneAPI)
		if !ok1 || !ok2 {
			return true
		}
		ready := func(a *keystonev1.KeystoneAPI) string {
			if c := a.Status.Conditions.Get(condition.ReadyCondition); c != nil {
				return string(c.Status) + "/" + string(c.Reason) + "/" + c.Message
			}
			return ""
		}
		return ready(o) != ready(n) || o.Status.ObservedGeneration != n.Status.ObservedGeneration ||
			!maps.Equal(o.Status.APIEndpoints, n.Status.APIEndpoints) ||
			!o.DeletionTimestamp.Equal(n.DeletionTimestamp)
	},
}

// enqueueNamespace wakes the KeystoneServices of an object's namespace, those that
// match filter(object) when filter is set.
func (r *Reconciler) enqueueNamespace(filter func(client.Object) client.ListOption) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
		opts := []client.ListOption{client.InNamespace(o.GetNamespace())}
		if filter != nil {
			opts = append(opts, filter(o))
		}
		list := &keystonev1.KeystoneServiceList{}
		if err := r.List(ctx, list, opts...); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing KeystoneServices for a watch event")
			return nil
		}
		reqs := make([]reconcile.Request, 0, len(list.Items))
		for _, s := range list.Items {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&s)})
		}
		return reqs
	})
}

// Reconcile runs the registration steps of a KeystoneService in order and reports them.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, err error) {
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
		result, err = condition.RequeueOnConflict(result, err)
		if !svc.DeletionTimestamp.IsZero() {
			r.Reporter.Metrics.Forget(Kind, svc)
			r.Reporter.Versions.Forget(svc)
		}
	}()
	if !svc.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, s)
	}
	if err := finalizers.Add(ctx, r.Client, svc, Finalizer); err != nil {
		return ctrl.Result{}, err
	}
	result, err = condition.RunPhases(ctx, s.round, s, r.phases())
	if err == nil && result.IsZero() && s.round.Unconfirmed() {
		result.RequeueAfter = ConfirmInterval
	}
	return result, err
}
