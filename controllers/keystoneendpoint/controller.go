package keystoneendpoint

import (
	"context"
	"fmt"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/controllers/registration"
	"github.com/keystone-stepwise/keystone-operator/internal/reconciler"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// Kind is the reported kind.
const Kind = "KeystoneEndpoint"

// Finalizer keeps a KeystoneEndpoint until its endpoints are removed from Keystone.
const Finalizer = "keystone.openstack.org/keystoneendpoint"

// serviceNameIndex finds the KeystoneEndpoints of a KeystoneService.
const serviceNameIndex = "spec.serviceName"

var steps = condition.Steps(keystonev1.KeystoneEndpointSteps)

// Reconciler reconciles a KeystoneEndpoint.
type Reconciler struct {
	registration.Base
	// Recent spares Keystone the reads of duplicate wake-ups.
	Recent registration.Recent
}

// scope is what one reconcile of a KeystoneEndpoint has seen so far.
type scope struct {
	// Session.API is the namespace's KeystoneAPI once usable (KeystoneAPIReady True);
	// found is it however it is, nil when there is none.
	registration.Session
	endpoint *keystonev1.KeystoneEndpoint
	found    *keystonev1.KeystoneAPI
	service  *keystonev1.KeystoneService
}

// +kubebuilder:rbac:groups=keystone.openstack.org,resources=keystoneendpoints,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=keystone.openstack.org,resources=keystoneendpoints/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=keystone.openstack.org,resources=keystoneendpoints/finalizers,verbs=update
// +kubebuilder:rbac:groups=keystone.openstack.org,resources=keystoneapis;keystoneservices,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// SetupWithManager registers the controller and its watches: the namespace's
// KeystoneAPI and its admin Secret wake every KeystoneEndpoint of the namespace, a
// KeystoneService those of its service. The KeystoneServices it holds are found by
// keystoneservice.FinalizerIndex, which the KeystoneService controller registers on
// the same manager (cmd/manager sets both up).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &keystonev1.KeystoneEndpoint{}, serviceNameIndex,
		func(o client.Object) []string { return []string{o.(*keystonev1.KeystoneEndpoint).Spec.ServiceName} }); err != nil {
		return fmt.Errorf("indexing KeystoneEndpoint by service name: %w", err)
	}
	list := &keystonev1.KeystoneEndpointList{}
	return ctrl.NewControllerManagedBy(mgr).
		For(&keystonev1.KeystoneEndpoint{}, builder.WithPredicates(reconciler.IgnoreStatusUpdates)).
		WithOptions(controller.Options{MaxConcurrentReconciles: registration.Concurrency(r.Concurrency)}).
		Watches(&keystonev1.KeystoneAPI{}, reconciler.EnqueueInNamespace(r.Client, list, nil),
			builder.WithPredicates(registration.KeystoneAPIChanged)).
		Watches(&keystonev1.KeystoneService{}, reconciler.EnqueueInNamespace(r.Client, list, r.ofService),
			builder.WithPredicates(keystoneServiceChanged)).
		Watches(&corev1.Secret{}, reconciler.EnqueueInNamespace(r.Client, list, registration.SecretWakes(r.Client, nil))).
		Complete(reconciler.NewReconciler(r.Client, r.Reporter, r.Clock, r.kind()))
}

// ofService selects the KeystoneEndpoints of a KeystoneService: those naming it, by its
// object name or (where the two differ) by its serviceName.
func (r *Reconciler) ofService(o client.Object) []client.ListOption {
	svc, ok := o.(*keystonev1.KeystoneService)
	if !ok || (svc.Spec.ServiceName != "" && svc.Spec.ServiceName != svc.Name) {
		// Rare: the names differ. Every KeystoneEndpoint of the namespace looks.
		return []client.ListOption{}
	}
	return []client.ListOption{client.MatchingFields{serviceNameIndex: svc.Name}}
}

// keystoneServiceChanged passes the KeystoneService updates a KeystoneEndpoint
// depends on: Ready as Mirror with Steady mirrors it, the generation it describes, the
// service ID, deletion, registration.OrphanAnnotation.
var keystoneServiceChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*keystonev1.KeystoneService)
		n, ok2 := e.ObjectNew.(*keystonev1.KeystoneService)
		if !ok1 || !ok2 {
			return true
		}
		return condition.MirrorKey(o, condition.Steady()) != condition.MirrorKey(n, condition.Steady()) || o.Status.ObservedGeneration != n.Status.ObservedGeneration ||
			o.Status.ServiceID != n.Status.ServiceID || !o.DeletionTimestamp.Equal(n.DeletionTimestamp) ||
			o.Annotations[registration.OrphanAnnotation] != n.Annotations[registration.OrphanAnnotation]
	},
}

// kind declares the KeystoneEndpoint to the reconcile skeleton.
func (r *Reconciler) kind() reconciler.Kind[*keystonev1.KeystoneEndpoint, *scope] {
	return reconciler.Kind[*keystonev1.KeystoneEndpoint, *scope]{
		Name:      Kind,
		New:       func() *keystonev1.KeystoneEndpoint { return &keystonev1.KeystoneEndpoint{} },
		Steps:     reconciler.AllSteps[*keystonev1.KeystoneEndpoint](steps),
		Finalizer: Finalizer,
		Scope: func(ep *keystonev1.KeystoneEndpoint, round *condition.Round) *scope {
			return &scope{Session: r.Begin(round), endpoint: ep}
		},
		Phases: []reconciler.Phase[*scope]{
			{Step: keystonev1.KeystoneEndpointKeystoneAPIReady, Run: r.reconcileKeystoneAPI},
			// Observes: a KeystoneService being deleted, or no longer named, is let go
			// whatever the KeystoneAPI's state.
			{Step: keystonev1.KeystoneEndpointServiceReady, Run: r.reconcileService, Observes: true},
			{Step: keystonev1.KeystoneEndpointEndpointsReady, Run: r.reconcileEndpoints},
		},
		Delete: r.reconcileDelete,
		// Its KeystoneService, as ServiceReady found it.
		Related: func(s *scope) []client.Object {
			name := s.endpoint.Spec.ServiceName
			if s.service != nil {
				name = s.service.Name
			}
			return []client.Object{&keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Namespace: s.endpoint.Namespace, Name: name}}}
		},
	}
}
