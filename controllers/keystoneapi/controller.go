package keystoneapi

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/access"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/internal/reconciler"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	memcachedv1 "github.com/openstack-k8s-operators/infra-operator/apis/memcached/v1beta1"
	rabbitmqv1 "github.com/openstack-k8s-operators/infra-operator/apis/rabbitmq/v1beta1"
	topologyv1 "github.com/openstack-k8s-operators/infra-operator/apis/topology/v1beta1"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	mariadbv1 "github.com/openstack-k8s-operators/mariadb-operator/api/v1beta1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Kind is the reported kind.
const Kind = "KeystoneAPI"

// Field indexes of KeystoneAPI, to find the objects an input concerns.
const (
	// secretIndex indexes KeystoneAPIs by every Secret they read (inputSecrets).
	secretIndex    = "secrets"
	memcachedIndex = "spec.memcachedInstance"
	databaseIndex  = "spec.databaseInstance"
	accountIndex   = "spec.databaseAccount"
	topologyIndex  = "spec.topologyRef.name"
	// accountSecretIndex indexes MariaDBAccounts by their password Secret.
	accountSecretIndex = "spec.secret"
	// memcachedCertificateIndex indexes Memcacheds by the client certificate's Secret they ask for.
	memcachedCertificateIndex = "mtls.secret"
)

var steps = condition.Steps(keystonev1.KeystoneAPISteps)

// Reconciler reconciles a KeystoneAPI.
type Reconciler struct {
	client.Client
	Reporter reconciler.Reporter
	Clock    clock.PassiveClock
	// Keystone logs the admin in for the external-mode check, with the memory of refused
	// logins the registrations share.
	Keystone *identity.Clients
	// DefaultImage is what an empty spec.containerImage is set to
	// (keystonev1.KeystoneAPIContainerImage when empty).
	DefaultImage string
	// DrainSeconds is how long a stopping API pod keeps serving (deploy.Gathered); the
	// default when 0.
	DrainSeconds int64
	// jobPods tells whether the pods of the jobs are watched (mayWatchJobPods): a job is
	// then done once its pod has succeeded (succeededPod).
	jobPods bool
	// privateCreated holds the private state Secrets this process created
	// (loadPrivateState).
	privateCreated sync.Map
	// verified holds, per KeystoneAPI UID, the external-mode check that last succeeded
	// (externalCheck).
	verified sync.Map
}

// +kubebuilder:rbac:groups=keystone.openstack.org,resources=keystoneapis,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=keystone.openstack.org,resources=keystoneapis/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=keystone.openstack.org,resources=keystoneapis/finalizers,verbs=update
// +kubebuilder:rbac:groups=keystone.openstack.org,resources=keystoneservices;keystoneendpoints;keystoneapplicationcredentials,verbs=get;list;watch
// +kubebuilder:rbac:groups=mariadb.openstack.org,resources=mariadbdatabases;mariadbaccounts,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=memcached.openstack.org,resources=memcacheds,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=rabbitmq.openstack.org,resources=transporturls,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=topology.openstack.org,resources=topologies,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups="",resources=secrets;services;configmaps,verbs=get;list;watch;create;update;patch;delete
// The jobs' pods are watched (only those: deploy.JobLabel), the API pods read when asked about.
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=batch,resources=jobs;cronjobs,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles;rolebindings,verbs=get;list;watch;create;update;patch
// The pods' Role grants the use of nonroot-v2; Kubernetes lets only who holds a permission grant it.
// +kubebuilder:rbac:groups=security.openshift.io,resources=securitycontextconstraints,resourceNames=nonroot-v2,verbs=use
// networkAttachments: their NetworkAttachmentDefinitions are read (Multus's kind).
// +kubebuilder:rbac:groups=k8s.cni.cncf.io,resources=network-attachment-definitions,verbs=get;list;watch

// SetupWithManager registers the controller, its field indexes and a watch on every input.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	ctx := context.Background()
	one := func(v func(*keystonev1.KeystoneAPI) string) func(*keystonev1.KeystoneAPI) []string {
		return func(a *keystonev1.KeystoneAPI) []string { return []string{v(a)} }
	}
	indexes := map[string]func(*keystonev1.KeystoneAPI) []string{
		secretIndex:    inputSecrets,
		memcachedIndex: one(func(a *keystonev1.KeystoneAPI) string { return a.Spec.MemcachedInstance }),
		databaseIndex:  one(func(a *keystonev1.KeystoneAPI) string { return a.Spec.DatabaseInstance }),
		accountIndex:   one(func(a *keystonev1.KeystoneAPI) string { return a.Spec.DatabaseAccount }),
		topologyIndex: one(func(a *keystonev1.KeystoneAPI) string {
			if a.Spec.TopologyRef == nil {
				return ""
			}
			return a.Spec.TopologyRef.Name
		}),
	}
	for field, values := range indexes {
		if err := mgr.GetFieldIndexer().IndexField(ctx, &keystonev1.KeystoneAPI{}, field, func(o client.Object) []string {
			return values(o.(*keystonev1.KeystoneAPI))
		}); err != nil {
			return fmt.Errorf("indexing KeystoneAPI by %s: %w", field, err)
		}
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &mariadbv1.MariaDBAccount{}, accountSecretIndex, func(o client.Object) []string {
		return []string{o.(*mariadbv1.MariaDBAccount).Spec.Secret}
	}); err != nil {
		return fmt.Errorf("indexing MariaDBAccount by %s: %w", accountSecretIndex, err)
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &memcachedv1.Memcached{}, memcachedCertificateIndex, func(o client.Object) []string {
		if mc := o.(*memcachedv1.Memcached); mc.GetMemcachedTLSSupport() && memcachedMTLSSecret(mc) != "" {
			return []string{memcachedMTLSSecret(mc)}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("indexing Memcached by %s: %w", memcachedCertificateIndex, err)
	}
	view := r.registrationsView()
	b := ctrl.NewControllerManagedBy(mgr)
	if mayWritePDBs(r.Client) {
		b = b.Owns(&policyv1.PodDisruptionBudget{})
	}
	if r.jobPods = mayWatchJobPods(r.Client); r.jobPods {
		b = b.Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(jobPodsAPI), builder.WithPredicates(podFinished))
	}
	return b.
		// The record of the admin's refused login is the operator's own write, like the status.
		For(&keystonev1.KeystoneAPI{}, builder.WithPredicates(reconciler.IgnoreOwnUpdates(access.AdminLoginRefusedAnnotation))).
		Owns(&corev1.Secret{}).
		Owns(&corev1.ConfigMap{}).
		Owns(&corev1.Service{}).
		Owns(&batchv1.Job{}).
		Owns(&batchv1.CronJob{}).
		Owns(&appsv1.Deployment{}).
		Owns(&corev1.ServiceAccount{}).
		Owns(&rbacv1.Role{}).
		Owns(&rbacv1.RoleBinding{}).
		Owns(&mariadbv1.MariaDBDatabase{}).
		Owns(&rabbitmqv1.TransportURL{}).
		// The account is watched by name, not ownership: an existing one is adopted.
		Watches(&mariadbv1.MariaDBAccount{}, r.enqueueBy(accountIndex, func(o client.Object) string { return o.GetName() })).
		// A KeystoneAPI created or deleted changes which one of the namespace is the first.
		Watches(&keystonev1.KeystoneAPI{}, reconciler.EnqueueInNamespace(r.Client, &keystonev1.KeystoneAPIList{}, nil),
			builder.WithPredicates(predicate.Funcs{UpdateFunc: func(event.UpdateEvent) bool { return false }})).
		// The consolidated view follows the registrations' Ready, not their every round,
		// and a burst of changes of any of their kinds wakes it once per
		// RegistrationsViewInterval: one throttle for the three.
		Watches(&keystonev1.KeystoneService{}, view, builder.WithPredicates(registrationReadyChanged)).
		Watches(&keystonev1.KeystoneEndpoint{}, view, builder.WithPredicates(registrationReadyChanged)).
		Watches(&keystonev1.KeystoneApplicationCredential{}, view, builder.WithPredicates(registrationReadyChanged)).
		Watches(&corev1.Secret{}, r.enqueueBy(secretIndex, func(o client.Object) string { return o.GetName() })).
		// A MariaDBAccount's password, a Memcached's client certificate (its renewal rolls the pods).
		Watches(&corev1.Secret{}, r.enqueueForSecretOf(&mariadbv1.MariaDBAccountList{}, accountSecretIndex, accountIndex)).
		Watches(&corev1.Secret{}, r.enqueueForSecretOf(&memcachedv1.MemcachedList{}, memcachedCertificateIndex, memcachedIndex)).
		Watches(&memcachedv1.Memcached{}, r.enqueueBy(memcachedIndex, func(o client.Object) string { return o.GetName() })).
		Watches(&topologyv1.Topology{}, r.enqueueBy(topologyIndex, func(o client.Object) string { return o.GetName() })).
		Watches(&corev1.Service{}, r.enqueueBy(databaseIndex, func(o client.Object) string {
			if o.GetLabels()["app"] != "mariadb" {
				return ""
			}
			return galeraName(o.GetLabels()["cr"])
		})).
		Complete(reconciler.NewReconciler(r.Client, r.Reporter, r.Clock, r.kind()))
}

// inputSecrets are the Secrets a KeystoneAPI reads and does not own: the admin
// password, the certificates, the CA bundle, the httpd customization, the federated
// realms' metadata and the notifications' transport URL.
func inputSecrets(a *keystonev1.KeystoneAPI) []string {
	names := []string{a.Spec.Secret}
	for _, iface := range deploy.Interfaces {
		if name := deploy.TLSSecretName(a, iface); name != "" {
			names = append(names, name)
		}
	}
	if a.Spec.TLS.CaBundleSecretName != "" {
		names = append(names, a.Spec.TLS.CaBundleSecretName)
	}
	if c := a.Spec.HttpdCustomization.CustomConfigSecret; c != nil && *c != "" {
		names = append(names, *c)
	}
	if a.Spec.FederatedRealmConfig != "" {
		names = append(names, a.Spec.FederatedRealmConfig)
	}
	if a.Status.TransportURLSecret != "" {
		names = append(names, a.Status.TransportURLSecret)
	}
	return names
}

// enqueueBy wakes the KeystoneAPIs of an object's namespace whose indexed field equals
// key(object).
func (r *Reconciler) enqueueBy(index string, key func(client.Object) string) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
		return r.apisBy(ctx, index, o.GetNamespace(), key(o))
	})
}

// apisBy returns requests for the KeystoneAPIs of namespace ns whose indexed field equals value.
func (r *Reconciler) apisBy(ctx context.Context, index, ns, value string) []reconcile.Request {
	if value == "" {
		return nil
	}
	return reconciler.RequestsFor(ctx, r.Client, &keystonev1.KeystoneAPIList{}, client.InNamespace(ns), client.MatchingFields{index: value})
}

// enqueueForSecretOf wakes, for a Secret's event, the KeystoneAPIs using (by apiIndex)
// the objects of list that name that Secret (by secretIndex): the MariaDBAccount keeping
// its password there, the Memcached asking for that client certificate.
func (r *Reconciler) enqueueForSecretOf(list client.ObjectList, secretIndex, apiIndex string) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
		var reqs []reconcile.Request
		for _, holder := range reconciler.RequestsFor(ctx, r.Client, list, client.InNamespace(o.GetNamespace()),
			client.MatchingFields{secretIndex: o.GetName()}) {
			reqs = append(reqs, r.apisBy(ctx, apiIndex, holder.Namespace, holder.Name)...)
		}
		return reqs
	})
}

// galeraName is the Galera a mariadb-operator Service's "cr" label names
// ("mariadb-<name>"); "" for any other label.
func galeraName(cr string) string {
	if name, ok := strings.CutPrefix(cr, "mariadb-"); ok {
		return name
	}
	return ""
}

// kind declares the KeystoneAPI to the reconcile skeleton.
func (r *Reconciler) kind() reconciler.Kind[*keystonev1.KeystoneAPI, *scope] {
	return reconciler.Kind[*keystonev1.KeystoneAPI, *scope]{
		Name:      Kind,
		New:       func() *keystonev1.KeystoneAPI { return &keystonev1.KeystoneAPI{} },
		Steps:     appliedSteps,
		Finalizer: Finalizer,
		Default:   r.defaultImage,
		Scope: func(api *keystonev1.KeystoneAPI, round *condition.Round) *scope {
			return &scope{api: api, round: round, in: deploy.Gathered{API: api, DrainSeconds: r.DrainSeconds},
				previousEndpoints: maps.Clone(api.Status.APIEndpoints)}
		},
		Phases:  r.phases(),
		Delete:  r.reconcileDelete,
		Related: func(s *scope) []client.Object { return related(s.api) },
		Deadlines: func(s *scope) []reconciler.Deadline {
			return []reconciler.Deadline{{Name: "fernetRotation", At: s.fernetRotation}}
		},
	}
}

// clearSkipped clears the status a step reports when the spec no longer has that step:
// status.networkAttachments without networkAttachments (NetworkAttachmentsReady).
func clearSkipped(_ context.Context, s *scope) (ctrl.Result, error) {
	if len(s.api.Spec.NetworkAttachments) == 0 {
		s.api.Status.NetworkAttachments = nil
	}
	return ctrl.Result{}, nil
}

// defaultImage sets an empty spec.containerImage to the operator's default, as
// keystone-operator's defaulting webhook (KeystoneAPI.Default) sets it from
// RELATED_IMAGE_KEYSTONE_API_IMAGE_URL_DEFAULT: its sample and other YAML written for it
// leave the field out.
func (r *Reconciler) defaultImage(api *keystonev1.KeystoneAPI) string {
	if api.Spec.ContainerImage != "" {
		return ""
	}
	api.Spec.ContainerImage = r.DefaultImage
	if api.Spec.ContainerImage == "" {
		api.Spec.ContainerImage = keystonev1.KeystoneAPIContainerImage
	}
	return "spec.containerImage was empty: set to the operator's default, " + api.Spec.ContainerImage
}

// related names what a KeystoneAPI created or holds, in the order of its steps: in
// external mode only the client configuration.
func related(api *keystonev1.KeystoneAPI) []client.Object {
	named := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: api.Namespace, Name: name} }
	openstackConfig := []client.Object{
		&corev1.ConfigMap{ObjectMeta: named(deploy.OpenStackConfigName)},
		&corev1.Secret{ObjectMeta: named(deploy.OpenStackConfigSecretName)},
	}
	if api.Spec.ExternalKeystoneAPI {
		return openstackConfig
	}
	objs := []client.Object{
		&corev1.Secret{ObjectMeta: named(deploy.CleanupSecretName(api))},
		&corev1.ServiceAccount{ObjectMeta: named(deploy.ServiceAccountName(api))},
		&rbacv1.Role{ObjectMeta: named(deploy.RoleName(api))},
		&rbacv1.RoleBinding{ObjectMeta: named(deploy.RoleBindingName(api))},
	}
	if api.Spec.TopologyRef != nil {
		objs = append(objs, &topologyv1.Topology{ObjectMeta: named(api.Spec.TopologyRef.Name)})
	}
	objs = append(objs,
		&mariadbv1.MariaDBDatabase{ObjectMeta: named(deploy.DatabaseName)},
		&mariadbv1.MariaDBAccount{ObjectMeta: named(api.Spec.DatabaseAccount)},
		&corev1.Secret{ObjectMeta: named(deploy.DBSecretName(api))},
		&memcachedv1.Memcached{ObjectMeta: named(api.Spec.MemcachedInstance)},
		&rabbitmqv1.TransportURL{ObjectMeta: named(TransportURLName(api))},
		&corev1.Secret{ObjectMeta: named(deploy.ConfigSecretName(api))},
		&corev1.Secret{ObjectMeta: named(deploy.PrivateStateSecretName(api))},
		&corev1.Secret{ObjectMeta: named(deploy.KeysSecretName(api))},
		&batchv1.Job{ObjectMeta: named(deploy.DBSyncJobName(api))},
		&corev1.Service{ObjectMeta: named(deploy.ServiceName(api, keystonev1.EndpointPublic))},
		&corev1.Service{ObjectMeta: named(deploy.ServiceName(api, keystonev1.EndpointInternal))},
		&batchv1.Job{ObjectMeta: named(deploy.BootstrapJobName(api))},
		&appsv1.Deployment{ObjectMeta: named(api.Name)},
		&policyv1.PodDisruptionBudget{ObjectMeta: named(deploy.PDBName(api))},
		&batchv1.CronJob{ObjectMeta: named(deploy.TrustFlushCronJobName(api))},
	)
	return append(objs, openstackConfig...)
}

// appliedSteps are the steps that apply to the spec: in external mode only the input,
// the endpoint check and the client configuration; otherwise every step but the
// endpoint check, which is the deployment's own readiness, and but TLSInputReady,
// TopologyReady and NetworkAttachmentsReady where the spec has no such input.
func appliedSteps(api *keystonev1.KeystoneAPI) condition.Steps {
	return steps.Without(skippedSteps(api)...)
}

func skippedSteps(api *keystonev1.KeystoneAPI) []lc.Type {
	var skip []lc.Type
	if !deploy.UsesTLS(api) || (api.Spec.ExternalKeystoneAPI && api.Spec.TLS.CaBundleSecretName == "") {
		skip = append(skip, keystonev1.KeystoneAPITLSInputReady)
	}
	if api.Spec.TopologyRef == nil || api.Spec.ExternalKeystoneAPI {
		skip = append(skip, keystonev1.KeystoneAPITopologyReady)
	}
	if len(api.Spec.NetworkAttachments) == 0 || api.Spec.ExternalKeystoneAPI {
		skip = append(skip, keystonev1.KeystoneAPINetworkAttachmentsReady)
	}
	if !api.Spec.ExternalKeystoneAPI {
		return append(skip, keystonev1.KeystoneAPIEndpointReady)
	}
	for _, t := range keystonev1.KeystoneAPISteps {
		switch t {
		case keystonev1.KeystoneAPIInputReady, keystonev1.KeystoneAPITLSInputReady, keystonev1.KeystoneAPIEndpointReady,
			keystonev1.KeystoneAPIOpenStackConfigReady:
		default:
			skip = append(skip, t)
		}
	}
	return skip
}

// phases lists the steps of a KeystoneAPI in declared order; RunPhases passes over
// the ones skipped for the spec. Every step whose objects can exist observes
// (reconciler.Phase.Observes): it runs every round, reports them as they are, and acts
// (creates, renders, runs a job, rolls the pods) only once every step before it that it
// needs is True (scope.acting). The external endpoint check has nothing to observe but
// Keystone, with the admin's password: it runs once the steps before it are True.
func (r *Reconciler) phases() []reconciler.Phase[*scope] {
	observes := func(step lc.Type, run func(context.Context, *scope) (ctrl.Result, error)) reconciler.Phase[*scope] {
		return reconciler.Phase[*scope]{Step: step, Run: run, Observes: true}
	}
	return []reconciler.Phase[*scope]{
		// Not a step: what a step the spec no longer has reported goes with it.
		{Run: clearSkipped},
		observes(keystonev1.KeystoneAPIInputReady, r.reconcileInput),
		observes(keystonev1.KeystoneAPIServiceAccountReady, r.reconcileServiceAccount),
		observes(keystonev1.KeystoneAPITLSInputReady, r.reconcileTLS),
		observes(keystonev1.KeystoneAPITopologyReady, r.reconcileTopology),
		observes(keystonev1.KeystoneAPIDBReady, r.reconcileDatabase),
		observes(keystonev1.KeystoneAPIMemcachedReady, r.reconcileMemcached),
		observes(keystonev1.KeystoneAPIRabbitMqTransportURLReady, r.reconcileNotifications),
		observes(keystonev1.KeystoneAPIServiceConfigReady, r.reconcileConfig),
		observes(keystonev1.KeystoneAPIFernetKeysReady, r.reconcileFernetKeys),
		observes(keystonev1.KeystoneAPIDBSyncReady, r.reconcileDBSync),
		observes(keystonev1.KeystoneAPIExposeServiceReady, r.reconcileServices),
		observes(keystonev1.KeystoneAPIBootstrapReady, r.reconcileBootstrap),
		observes(keystonev1.KeystoneAPIDeploymentReady, r.reconcileDeployment),
		observes(keystonev1.KeystoneAPIPDBReady, r.reconcilePDB),
		observes(keystonev1.KeystoneAPINetworkAttachmentsReady, r.reconcileNetworks),
		observes(keystonev1.KeystoneAPICronJobReady, r.reconcileTrustFlush),
		{Step: keystonev1.KeystoneAPIEndpointReady, Run: r.reconcileExternalEndpoint},
		observes(keystonev1.KeystoneAPIOpenStackConfigReady, r.reconcileOpenStackConfig),
		// Not steps: the finalizers on what the KeystoneAPI no longer uses, released once
		// its pods (or the external Keystone) run without them; RegistrationsReady, the
		// namespace's registrations at a glance.
		{Run: r.releaseUnused},
		{Run: r.reconcileRegistrations},
	}
}
