package keystoneservice

import (
	"context"
	"fmt"
	"slices"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/controllers/registration"
	"github.com/keystone-stepwise/keystone-operator/internal/finalizers"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/internal/reconciler"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// Kind is the reported kind.
const Kind = "KeystoneService"

// Finalizer keeps a KeystoneService until its registration is removed from Keystone.
const Finalizer = "keystone.openstack.org/keystoneservice"

const secretIndex = "spec.secret"

var steps = condition.Steps(keystonev1.KeystoneServiceSteps)

// Reconciler reconciles a KeystoneService.
type Reconciler struct {
	registration.Base
	// RegionRecheck is how often the owners' records in each Keystone are read for what
	// other clusters changed (regionWatch); DefaultRegionRecheck when 0.
	RegionRecheck time.Duration

	// regions is the regions' watch, which the rounds leave what they saw (SetupWithManager).
	regions *regionWatch
}

// scope is what one reconcile of a KeystoneService has seen so far.
type scope struct {
	registration.Session
	service  *keystonev1.KeystoneService
	password string
	// passwordVersion identifies the Secret version the password was read from.
	passwordVersion string
	keystone        *identity.Client
	projectID       string
	user            identity.Registered
	roleIDs         map[string]string
	// seen is what the round read of Keystone's services and users (leaveRecords).
	seen *identity.Seen
	// firstService tells that this round created the KeystoneService's first service
	// (its status named none before).
	firstService bool
	// otherAdmins are the IDs of other namespaces' admin users (InputReady read them),
	// never taken as the service user.
	otherAdmins map[string]bool
}

// +kubebuilder:rbac:groups=keystone.openstack.org,resources=keystoneservices,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=keystone.openstack.org,resources=keystoneservices/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=keystone.openstack.org,resources=keystoneservices/finalizers,verbs=update
// +kubebuilder:rbac:groups=keystone.openstack.org,resources=keystoneapis,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=keystone.openstack.org,resources=keystoneendpoints,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// SetupWithManager registers the controller and its watches: the namespace's
// KeystoneAPI and its admin Secret wake every KeystoneService of the namespace, another
// Secret those that read it.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &keystonev1.KeystoneService{}, secretIndex,
		func(o client.Object) []string { return []string{o.(*keystonev1.KeystoneService).Spec.Secret} }); err != nil {
		return fmt.Errorf("indexing KeystoneService by secret: %w", err)
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &keystonev1.KeystoneService{}, userIndex, usersNamed); err != nil {
		return fmt.Errorf("indexing KeystoneService by user: %w", err)
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &keystonev1.KeystoneService{}, refusedIndex, refusedOf); err != nil {
		return fmt.Errorf("indexing the refused KeystoneServices: %w", err)
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &keystonev1.KeystoneService{}, FinalizerIndex, finalizersOf); err != nil {
		return fmt.Errorf("indexing KeystoneService by finalizer: %w", err)
	}
	// Keystone, which other clusters share, cannot be watched: read for their changes.
	regions := newRegionWatch(r)
	r.regions = regions
	if err := mgr.Add(regions); err != nil {
		return fmt.Errorf("adding the regions' watch: %w", err)
	}
	return ctrl.NewControllerManagedBy(mgr).
		// The annotations a round records (recordUser) are its own writes, like its status.
		For(&keystonev1.KeystoneService{}, builder.WithPredicates(predicate.Or[client.Object](
			reconciler.IgnoreOwnUpdates(ownAnnotations...), endpointReleased))).
		WithOptions(controller.Options{MaxConcurrentReconciles: registration.Concurrency(r.Concurrency)}).
		Watches(&keystonev1.KeystoneAPI{}, reconciler.EnqueueInNamespace(r.Client, &keystonev1.KeystoneServiceList{}, nil),
			builder.WithPredicates(registration.KeystoneAPIChanged)).
		// The KeystoneServices sharing a user (shared.go).
		Watches(&keystonev1.KeystoneService{}, r.wakeSharers()).
		// The refused ones of any namespace, when one lets go of a service or user (waiting.go).
		Watches(&keystonev1.KeystoneService{}, r.wakeRefused()).
		WatchesRawSource(source.Channel(regions.events, &handler.EnqueueRequestForObject{})).
		// A KeystoneEndpoint gone, whatever it released: one waiting for it goes on.
		Watches(&keystonev1.KeystoneEndpoint{}, r.wakeHeld()).
		Watches(&corev1.Secret{}, r.secretReaders()).
		Complete(reconciler.NewReconciler(r.Client, r.Reporter, r.Clock, r.kind()))
}

// secretReaders wakes, on a Secret's change, the KeystoneServices of its namespace that
// read it: those naming it (spec.secret), and every one when it holds the admin's
// password of the namespace's KeystoneAPI (registration.SecretWakes).
func (r *Reconciler) secretReaders() handler.EventHandler {
	return reconciler.EnqueueInNamespace(r.Client, &keystonev1.KeystoneServiceList{},
		registration.SecretWakes(r.Client, func(o client.Object) []client.ListOption {
			return []client.ListOption{client.MatchingFields{secretIndex: o.GetName()}}
		}))
}

// endpointReleased passes an update in which a KeystoneEndpoint released its hold on
// the KeystoneService: one waiting for its endpoints (waitForEndpoints) goes on, also
// while only its KeystoneAPI is being deleted.
var endpointReleased = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
	UpdateFunc: func(e event.UpdateEvent) bool {
		return len(finalizers.Holders(e.ObjectNew, "keystoneendpoint")) < len(finalizers.Holders(e.ObjectOld, "keystoneendpoint"))
	},
}

// wakeHeld wakes, when a KeystoneEndpoint is deleted, the KeystoneServices of its
// namespace holding its finalizer (HeldBy): one waiting for its endpoints
// (waitForEndpoints) goes on, also when the KeystoneEndpoint went without releasing it.
func (r *Reconciler) wakeHeld() handler.TypedEventHandler[client.Object, reconcile.Request] {
	return handler.TypedFuncs[client.Object, reconcile.Request]{
		DeleteFunc: func(ctx context.Context, e event.TypedDeleteEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			held, err := HeldBy(ctx, r.Client, e.Object.GetNamespace(), e.Object.GetName())
			if err != nil {
				ctrl.LoggerFrom(ctx).Error(err, "finding the KeystoneServices a deleted KeystoneEndpoint held")
				return
			}
			for _, svc := range held {
				q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(svc)})
			}
		},
	}
}

// kind declares the KeystoneService to the reconcile skeleton.
func (r *Reconciler) kind() reconciler.Kind[*keystonev1.KeystoneService, *scope] {
	return reconciler.Kind[*keystonev1.KeystoneService, *scope]{
		Name:      Kind,
		New:       func() *keystonev1.KeystoneService { return &keystonev1.KeystoneService{} },
		Steps:     reconciler.AllSteps[*keystonev1.KeystoneService](steps),
		Finalizer: Finalizer,
		// The user is recorded before the first request to Keystone, in the same patch.
		Record: func(svc *keystonev1.KeystoneService) map[string]string {
			return map[string]string{UserAnnotation: svc.Spec.ServiceUser}
		},
		Scope: func(svc *keystonev1.KeystoneService, round *condition.Round) *scope {
			carryTakeover(svc, round)
			if r.regions != nil {
				r.regions.roundStarts(svc.UID)
			}
			return &scope{Session: r.Begin(round), service: svc, seen: identity.NewSeen(svc.Spec.ServiceType, svc.Spec.ServiceUser)}
		},
		Phases: r.phases(),
		Delete: r.reconcileDelete,
		// Its password Secret.
		Related: func(s *scope) []client.Object {
			return []client.Object{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: s.service.Namespace, Name: s.service.Spec.Secret}}}
		},
	}
}

// phases lists the steps of a KeystoneService in declared order.
func (r *Reconciler) phases() []reconciler.Phase[*scope] {
	return []reconciler.Phase[*scope]{
		{Step: keystonev1.KeystoneServiceKeystoneAPIReady, Run: r.reconcileKeystoneAPI},
		{Step: keystonev1.KeystoneServiceInputReady, Run: r.reconcileInput},
		{Step: keystonev1.KeystoneServiceServiceReady, Run: observed(r.reconcileService)},
		{Step: keystonev1.KeystoneServiceUserReady, Run: observed(r.reconcileUser)},
		{Step: keystonev1.KeystoneServiceRolesReady, Run: observed(r.reconcileRoles)},
		{Step: keystonev1.KeystoneServiceRoleAssignmentReady, Run: r.leaveRecords(observed(r.reconcileAssignment))},
	}
}

type phaseRun = func(context.Context, *scope) (ctrl.Result, error)

// observed runs a phase with what it reads of Keystone's services and users collected
// in the round's identity.Seen.
func observed(run phaseRun) phaseRun {
	return func(ctx context.Context, s *scope) (ctrl.Result, error) {
		return run(identity.Observing(ctx, s.seen), s)
	}
}

// leaveRecords runs the last phase, then, when every step is True, leaves the regions'
// watch the records the round saw (regionWatch.leave), unless a write of its own or a
// change between two of its reads spoiled them.
func (r *Reconciler) leaveRecords(run phaseRun) phaseRun {
	return func(ctx context.Context, s *scope) (ctrl.Result, error) {
		result, err := run(ctx, s)
		if err != nil || r.regions == nil || slices.ContainsFunc(s.Round.Steps(), func(t lc.Type) bool {
			return s.Round.Applies(t) && !s.Round.IsTrue(t)
		}) {
			return result, err
		}
		r.regions.leave(s.service.UID, s.seen, s.service.Spec)
		return result, err
	}
}
