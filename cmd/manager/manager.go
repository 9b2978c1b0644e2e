package manager

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/controllers/keystoneapi"
	"github.com/keystone-stepwise/keystone-operator/controllers/keystoneapplicationcredential"
	"github.com/keystone-stepwise/keystone-operator/controllers/keystoneendpoint"
	"github.com/keystone-stepwise/keystone-operator/controllers/keystoneservice"
	"github.com/keystone-stepwise/keystone-operator/controllers/registration"
	"github.com/keystone-stepwise/keystone-operator/internal/access"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/internal/permissions"
	"github.com/keystone-stepwise/keystone-operator/internal/reconciler"
	memcachedv1 "github.com/openstack-k8s-operators/infra-operator/apis/memcached/v1beta1"
	rabbitmqv1 "github.com/openstack-k8s-operators/infra-operator/apis/rabbitmq/v1beta1"
	topologyv1 "github.com/openstack-k8s-operators/infra-operator/apis/topology/v1beta1"
	"github.com/openstack-k8s-operators/lib-common/modules/common/operator"
	mariadbv1 "github.com/openstack-k8s-operators/mariadb-operator/api/v1beta1"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	ctrlmanager "sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// Scheme holds every kind the operator reads or writes.
var Scheme = runtime.NewScheme()

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(Scheme))
	utilruntime.Must(keystonev1.AddToScheme(Scheme))
	utilruntime.Must(mariadbv1.AddToScheme(Scheme))
	utilruntime.Must(memcachedv1.AddToScheme(Scheme))
	utilruntime.Must(rabbitmqv1.AddToScheme(Scheme))
	utilruntime.Must(topologyv1.AddToScheme(Scheme))
}

// Options configure the manager.
type Options struct {
	// MetricsAddr serves Prometheus metrics; "0" disables them.
	MetricsAddr string
	// MetricsSecure serves them over HTTPS to authenticated, authorized callers only.
	MetricsSecure bool
	// MetricsCertDir, when set, holds the metrics server's certificate and key
	// (MetricsCertName, MetricsKeyName; tls.crt and tls.key when empty), reloaded when
	// they change, and implies HTTPS; without it, HTTPS uses a self-signed certificate.
	MetricsCertDir, MetricsCertName, MetricsKeyName string
	// ProbeAddr serves /healthz and /readyz; "0" disables them.
	ProbeAddr string
	// LeaderElection makes only one replica active.
	LeaderElection bool
	// LeaderElectionNamespace holds the lease when running outside a cluster, and is
	// then the operator's namespace (where it keeps the cluster's identity,
	// identity.ClusterConfigMap); in a pod, the pod's namespace is.
	LeaderElectionNamespace string
	// KeystoneTransport carries the requests to Keystone (each Keystone client through a
	// clone of it when it is an *http.Transport: identity.TransportFor);
	// identity.NewTransport's when nil.
	KeystoneTransport http.RoundTripper
	// ClusterDNS (host:port), when set and KeystoneTransport is nil, resolves Keystone's
	// Service names through the cluster's DNS server: for an operator run outside the cluster.
	ClusterDNS string
	// Clock stamps condition transitions and drives time-based steps; the real clock when nil.
	Clock clock.PassiveClock
	// Isolated: the manager shares nothing with other managers of the process (tests
	// that run several): its series go to a registry of its own, not to the one /metrics
	// serves, and its controllers' names are not checked for uniqueness.
	Isolated bool
	// Namespaces, when set, are the only namespaces the operator watches, caches and
	// writes in (keystone-operator's WATCH_NAMESPACE): it then needs Roles in those
	// namespaces, not a ClusterRole (config/namespaced).
	Namespaces []string
	// PprofAddr serves Go's profiles (/debug/pprof) when set and not "0"; off by default.
	PprofAddr string
	// KubeQPS and KubeBurst limit the requests to the Kubernetes API (client-go's token
	// bucket); when 0, the rest.Config's, else DefaultKubeQPS and DefaultKubeBurst.
	KubeQPS   float32
	KubeBurst int
	// RegistrationConcurrency is how many KeystoneServices, KeystoneEndpoints and
	// application credentials each reconcile at once; registration.DefaultConcurrency when 0.
	RegistrationConcurrency int
	// OrphanGrace is how long Keystone must have been unreachable or refusing before a
	// deletion annotated orphan-on-delete gives up; registration.DefaultOrphanGrace when 0.
	OrphanGrace time.Duration
	// RegionRecheck is how often the owners' records of the services and users in each
	// Keystone are read, to reconcile the KeystoneServices whose records other clusters
	// sharing it changed; keystoneservice.DefaultRegionRecheck when 0.
	RegionRecheck time.Duration
	// ClaimUnclusteredMarks claims what an object of the same kind, namespace and name
	// left in Keystone under an earlier version's mark, which names no cluster: for a
	// Keystone no two clusters shared before the upgrade.
	ClaimUnclusteredMarks bool
	// ClusterID names this cluster in the marks of what it registers in Keystone; when
	// empty, the UID of its kube-system namespace (ClusterIdentity).
	ClusterID string
	// APIDrainSeconds is how long a stopping Keystone API pod keeps serving before httpd
	// stops gracefully; deploy.DrainSeconds when 0.
	APIDrainSeconds int64
	// KeystoneAPIImage is what a KeystoneAPI's empty containerImage is set to;
	// keystonev1.KeystoneAPIContainerImage when empty (cmd/main.go reads
	// keystonev1.ContainerImageEnv into it).
	KeystoneAPIImage string
}

// The Kubernetes API rate limits unless told otherwise, chosen by make bench
// (BENCHMARKS.md, throughput, holds the figures): registrations cost the API server
// about eleven requests each, which controller-runtime's default for a kubeconfig (20
// per second, burst 30) would make the bound; at 200 the API server's own processor
// time is the bound, and 1,000 per second was no faster.
const (
	DefaultKubeQPS   = 200
	DefaultKubeBurst = 400
)

// RateLimited returns a copy of cfg with the options' rate limits; where neither the
// options nor cfg set one, the defaults.
func RateLimited(cfg *rest.Config, opts Options) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	if opts.KubeQPS > 0 {
		cfg.QPS = opts.KubeQPS
	}
	if opts.KubeBurst > 0 {
		cfg.Burst = opts.KubeBurst
	}
	if cfg.QPS <= 0 {
		cfg.QPS = DefaultKubeQPS
	}
	if cfg.Burst <= 0 {
		cfg.Burst = DefaultKubeBurst
	}
	return cfg
}

// WatchNamespaces parses keystone-operator's WATCH_NAMESPACE: namespaces separated by
// commas; empty for all.
func WatchNamespaces(value string) []string {
	var out []string
	for _, ns := range strings.Split(value, ",") {
		if ns = strings.TrimSpace(ns); ns != "" && !slices.Contains(out, ns) {
			out = append(out, ns)
		}
	}
	return out
}

// CacheOptions restrict the informers to the watched namespaces, and keep no
// managedFields (the largest part of most objects, read by no controller). Of the pods,
// only the jobs' are cached (deploy.JobLabel): a cluster holds many others, which the
// operator reads from the API server when it must.
func CacheOptions(opts Options) cache.Options {
	jobPods, err := labels.NewRequirement(deploy.JobLabel, selection.Exists, nil)
	if err != nil {
		panic(err) // a constant label key
	}
	o := cache.Options{DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: {Label: labels.NewSelector().Add(*jobPods)}}}
	if len(opts.Namespaces) > 0 {
		o.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range opts.Namespaces {
			o.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	return o
}

// MetricsServerOptions configures the metrics endpoint: plain HTTP at MetricsAddr (the
// commands bind 127.0.0.1 unless told otherwise), or with MetricsSecure HTTPS that
// answers only callers whose token Kubernetes authenticates (TokenReview) and who may
// GET /metrics (SubjectAccessReview), as kubebuilder's projects serve it. The
// permission for those reviews is config/rbac/metrics_auth_role.yaml: a ClusterRole
// whatever the install, as the reviews are cluster-wide.
// HTTP/2 is off (its stream-reset attacks, CVE-2023-44487), as kubebuilder's projects
// and keystone-operator serve it.
func MetricsServerOptions(opts Options) metricsserver.Options {
	o := metricsserver.Options{BindAddress: opts.MetricsAddr}
	if opts.MetricsSecure || opts.MetricsCertDir != "" {
		o.SecureServing = true
		o.FilterProvider = filters.WithAuthenticationAndAuthorization
		o.TLSOpts = []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }}
		// Empty names are controller-runtime's tls.crt and tls.key.
		o.CertDir, o.CertName, o.KeyName = opts.MetricsCertDir, opts.MetricsCertName, opts.MetricsKeyName
	}
	return o
}

// LeaderElectionID is the name of the leader election's Lease: keystone-operator's
// (its cmd/main.go), so that it and this operator never both lead in one namespace.
const LeaderElectionID = "6012128b.openstack.org"

// newControllerManager is controller-runtime's manager with the options of opts, the
// leader election timed as openstack-operator times it.
func newControllerManager(cfg *rest.Config, opts Options) (ctrl.Manager, error) {
	ctrlOpts := ctrl.Options{
		Scheme:                 Scheme,
		Cache:                  CacheOptions(opts),
		Metrics:                MetricsServerOptions(opts),
		HealthProbeBindAddress: opts.ProbeAddr,
		PprofBindAddress:       opts.PprofAddr,
		LeaderElection:         opts.LeaderElection,
		// keystone-operator's own lease: where both run in one namespace (openstack-operator's
		// Deployment runs this image in its place), only one of them ever reconciles.
		LeaderElectionID:        LeaderElectionID,
		LeaderElectionNamespace: opts.LeaderElectionNamespace,
		Controller:              config.Controller{SkipNameValidation: ptr.To(opts.Isolated)},
	}
	// The lease timings openstack-operator gives every operator it runs, in seconds:
	// LEASE_DURATION, RENEW_DEADLINE and RETRY_PERIOD (lib-common reads them).
	if err := operator.SetManagerOptions(&ctrlOpts, ctrl.Log.WithName("setup")); err != nil {
		return nil, fmt.Errorf("reading the leader election's timings: %w", err)
	}
	mgr, err := ctrl.NewManager(RateLimited(cfg, opts), ctrlOpts)
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	return mgr, nil
}

// registryOf is where the operator's own series go: the registry /metrics serves,
// or, Isolated, one of the manager's own.
func registryOf(opts Options) prometheus.Registerer {
	if opts.Isolated {
		return prometheus.NewRegistry()
	}
	return metrics.Registry
}

// New builds a manager with every controller registered.
func New(cfg *rest.Config, opts Options) (ctrl.Manager, error) {
	mgr, err := newControllerManager(cfg, opts)
	if err != nil {
		return nil, err
	}
	clk := opts.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	if opts.KeystoneTransport == nil && opts.ClusterDNS != "" {
		opts.KeystoneTransport = ClusterDNSTransport(opts.ClusterDNS, "cluster.local")
	}
	registry := registryOf(opts)
	m := reconciler.NewMetrics(registry, clk.Now)
	recorder, stopEvents, err := reconciler.NewEventRecorder(mgr.GetConfig(), mgr.GetHTTPClient(), Scheme, registry,
		ctrl.Log.WithName("events"))
	if err != nil {
		return nil, err
	}
	// Stopped with the manager; controller-runtime's own recorder throttles per object.
	if err := mgr.Add(ctrlmanager.RunnableFunc(func(ctx context.Context) error {
		<-ctx.Done()
		stopEvents()
		return nil
	})); err != nil {
		return nil, fmt.Errorf("adding the Event recorder: %w", err)
	}
	// Which permissions of config/rbac the manager lacks, said once (run by
	// openstack-operator, it has the RBAC that gives keystone-operator); the
	// controllers' client follows the answer, and asks for nothing it would be refused.
	ctx := context.Background()
	rules := checkPermissions(ctx, mgr.GetClient(), opts.Namespaces)
	// What a round creates is recorded, for the status it writes (reconciler.Related).
	apiClient := reconciler.RecordingClient{Client: permissions.Client{Client: mgr.GetClient(), Rules: rules}}
	reporter := func(kind string) reconciler.Reporter {
		return reconciler.Reporter{Client: apiClient, Recorder: recorder,
			Metrics: m, Versions: reconciler.NewVersions(), Reader: mgr.GetAPIReader(), Kind: kind}
	}
	// One client per Keystone and admin, shared by every controller that talks to Keystone,
	// and one memory of the logins Keystone refused.
	// A refused login of a KeystoneAPI's admin is recorded on it, for after a restart.
	keystoneClients := &identity.Clients{Transport: opts.KeystoneTransport, ClaimUnclustered: opts.ClaimUnclusteredMarks,
		RecordRefusal: access.RecordAdminRefusal(apiClient, ctrl.Log.WithName("identity"))}
	if err := (&keystoneapi.Reconciler{Client: apiClient, Reporter: reporter(keystoneapi.Kind), Clock: clk,
		Keystone: keystoneClients, DefaultImage: opts.KeystoneAPIImage, DrainSeconds: opts.APIDrainSeconds}).SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("registering the KeystoneAPI controller: %w", err)
	}
	cluster := opts.ClusterID
	if cluster == "" {
		cluster = identityOf(ctx, mgr, rules, operatorNamespace(opts))
	}
	base := func(kind string) registration.Base {
		return registration.Base{Client: apiClient, Reporter: reporter(kind), Clock: clk,
			Keystone: keystoneClients, Concurrency: opts.RegistrationConcurrency, ClusterID: cluster,
			Reader: mgr.GetAPIReader(), OrphanGrace: opts.OrphanGrace, Failures: registration.NewKeystoneFailures()}
	}
	if err := (&keystoneservice.Reconciler{Base: base(keystoneservice.Kind), RegionRecheck: opts.RegionRecheck}).SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("registering the KeystoneService controller: %w", err)
	}
	if err := (&keystoneendpoint.Reconciler{Base: base(keystoneendpoint.Kind)}).SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("registering the KeystoneEndpoint controller: %w", err)
	}
	if err := (&keystoneapplicationcredential.Reconciler{Base: base(keystoneapplicationcredential.Kind)}).SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("registering the KeystoneApplicationCredential controller: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, fmt.Errorf("adding health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return nil, fmt.Errorf("adding ready check: %w", err)
	}
	return mgr, nil
}
