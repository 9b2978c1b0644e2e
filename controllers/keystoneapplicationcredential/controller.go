package keystoneapplicationcredential

import (
	"context"
	"fmt"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/controllers/registration"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/internal/reconciler"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// Kind is the reported kind.
const Kind = "KeystoneApplicationCredential"

// Finalizer keeps a KeystoneApplicationCredential until its credentials are revoked.
const Finalizer = "keystone.openstack.org/keystoneapplicationcredential"

// Field indexes: the KeystoneApplicationCredentials that read a password Secret, and
// those of a user (the KeystoneService that creates the user wakes them).
const (
	secretIndex = "spec.secret"
	userIndex   = "spec.userName"
)

var steps = condition.Steps(keystonev1.KeystoneApplicationCredentialSteps)

// Reconciler reconciles a KeystoneApplicationCredential.
type Reconciler struct {
	registration.Base
	// NodeSets tells whether the data plane's NodeSet kind is installed (found at set-up).
	NodeSets bool
}

// scope is what one reconcile of a KeystoneApplicationCredential has seen so far.
type scope struct {
	registration.Session
	ac *keystonev1.KeystoneApplicationCredential
	// user is the service user's credentials, scoped to the service project.
	user identity.Credentials
	// userClient is authenticated as user.
	userClient *identity.Client
	// created tells whether this round made the current credential and its Secret.
	created bool
	// otherAdmins are the IDs of other namespaces' admin users (InputReady read them),
	// never logged in as.
	otherAdmins map[string]bool
}

// +kubebuilder:rbac:groups=keystone.openstack.org,resources=keystoneapplicationcredentials,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=keystone.openstack.org,resources=keystoneapplicationcredentials/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=keystone.openstack.org,resources=keystoneapplicationcredentials/finalizers,verbs=update
// +kubebuilder:rbac:groups=keystone.openstack.org,resources=keystoneapis,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=dataplane.openstack.org,resources=openstackdataplanenodesets,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// SetupWithManager registers the controller and its watches: its Secrets (a consumer
// releasing one), the user's password Secret, the namespace's KeystoneAPI and its admin
// Secret, and, where
// the data plane's NodeSet kind is installed, NodeSets.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	for field, value := range map[string]func(*keystonev1.KeystoneApplicationCredential) string{
		secretIndex: func(ac *keystonev1.KeystoneApplicationCredential) string { return ac.Spec.Secret },
		userIndex:   func(ac *keystonev1.KeystoneApplicationCredential) string { return ac.Spec.UserName },
	} {
		if err := mgr.GetFieldIndexer().IndexField(context.Background(), &keystonev1.KeystoneApplicationCredential{}, field,
			func(o client.Object) []string { return []string{value(o.(*keystonev1.KeystoneApplicationCredential))} }); err != nil {
			return fmt.Errorf("indexing KeystoneApplicationCredential by %s: %w", field, err)
		}
	}
	list := &keystonev1.KeystoneApplicationCredentialList{}
	b := ctrl.NewControllerManagedBy(mgr).
		For(&keystonev1.KeystoneApplicationCredential{}, builder.WithPredicates(reconciler.IgnoreStatusUpdates)).
		WithOptions(controller.Options{MaxConcurrentReconciles: registration.Concurrency(r.Concurrency)}).
		Owns(&corev1.Secret{}).
		Watches(&keystonev1.KeystoneAPI{}, reconciler.EnqueueInNamespace(r.Client, list, nil),
			builder.WithPredicates(registration.KeystoneAPIChanged)).
		Watches(&corev1.Secret{}, reconciler.EnqueueInNamespace(r.Client, list, registration.SecretWakes(r.Client,
			func(o client.Object) []client.ListOption {
				return []client.ListOption{client.MatchingFields{secretIndex: o.GetName()}}
			}))).
		Watches(&keystonev1.KeystoneService{}, reconciler.EnqueueInNamespace(r.Client, list, func(o client.Object) []client.ListOption {
			return []client.ListOption{client.MatchingFields{userIndex: o.(*keystonev1.KeystoneService).Spec.ServiceUser}}
		}), builder.WithPredicates(predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, readyChanged)))
	r.NodeSets = nodeSetsInstalled(mgr.GetRESTMapper())
	if r.NodeSets {
		nodeSet := &unstructured.Unstructured{}
		nodeSet.SetGroupVersionKind(nodeSetGVK)
		b = b.Watches(nodeSet, reconciler.EnqueueInNamespace(r.Client, list, nil),
			builder.WithPredicates(predicate.ResourceVersionChangedPredicate{}))
	}
	return b.Complete(reconciler.NewReconciler(r.Client, r.Reporter, r.Clock, r.kind()))
}

// readyChanged passes updates that change an object's Ready condition.
var readyChanged = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	ready := func(o client.Object) string {
		if svc, ok := o.(*keystonev1.KeystoneService); ok {
			if c := svc.Status.Conditions.Get(condition.ReadyCondition); c != nil {
				return string(c.Status)
			}
		}
		return ""
	}
	return ready(e.ObjectOld) != ready(e.ObjectNew)
}}

// kind declares the KeystoneApplicationCredential to the reconcile skeleton.
func (r *Reconciler) kind() reconciler.Kind[*keystonev1.KeystoneApplicationCredential, *scope] {
	return reconciler.Kind[*keystonev1.KeystoneApplicationCredential, *scope]{
		Name:      Kind,
		New:       func() *keystonev1.KeystoneApplicationCredential { return &keystonev1.KeystoneApplicationCredential{} },
		Steps:     reconciler.AllSteps[*keystonev1.KeystoneApplicationCredential](steps),
		Finalizer: Finalizer,
		Gone:      r.releaseGone,
		Scope: func(ac *keystonev1.KeystoneApplicationCredential, round *condition.Round) *scope {
			return &scope{Session: r.Begin(round), ac: ac}
		},
		Phases: []reconciler.Phase[*scope]{
			{Step: keystonev1.KeystoneApplicationCredentialKeystoneAPIReady, Run: r.reconcileKeystoneAPI},
			{Step: keystonev1.KeystoneApplicationCredentialInputReady, Run: r.reconcileInput},
			{Step: keystonev1.KeystoneApplicationCredentialCredentialReady, Run: r.reconcileCredential},
			{Step: keystonev1.KeystoneApplicationCredentialSecretReady, Run: r.reconcileSecret},
			{Step: keystonev1.KeystoneApplicationCredentialRotationReady, Run: r.reconcileRotation},
			{Step: keystonev1.KeystoneApplicationCredentialCleanupReady, Run: r.reconcileCleanup},
			// Not a step: a round that wrote to Keystone runs again to confirm it.
			{Run: func(_ context.Context, s *scope) (ctrl.Result, error) { return registration.ConfirmLater(s.Round), nil }},
		},
		Delete: r.reconcileDelete,
		Deadlines: func(s *scope) []reconciler.Deadline {
			out := []reconciler.Deadline{}
			for name, t := range map[string]*metav1.Time{"expiresAt": s.ac.Status.ExpiresAt, "rotationEligibleAt": s.ac.Status.RotationEligibleAt} {
				if t != nil {
					out = append(out, reconciler.Deadline{Name: name, At: t.Time})
				}
			}
			return out
		},
		// Its current and previous Secrets.
		Related: func(s *scope) []client.Object {
			secret := func(name string) client.Object {
				return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: s.ac.Namespace, Name: name}}
			}
			return []client.Object{secret(s.ac.Status.SecretName), secret(s.ac.Status.PreviousSecretName)}
		},
	}
}
