// Command manager runs the Keystone operator's controllers.
package main

import (
	"flag"
	"os"
	"runtime/debug"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/cmd/manager"
	"github.com/keystone-stepwise/keystone-operator/controllers/keystoneservice"
	"github.com/keystone-stepwise/keystone-operator/controllers/registration"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

func main() {
	var c commandLine
	c.bind(flag.CommandLine)
	flag.Parse()
	opts := c.options()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&c.zap)))
	log := ctrl.Log.WithName("setup")
	if percent, limit := manager.GCSettings(os.Getenv, manager.CgroupMemoryLimit); percent != 0 || limit != 0 {
		if percent != 0 {
			debug.SetGCPercent(percent)
		}
		if limit != 0 {
			debug.SetMemoryLimit(limit)
		}
		log.Info("garbage collector tuned (GOGC and GOMEMLIMIT in the environment take precedence)", "gcPercent", percent,
			"softMemoryLimitBytes", limit)
	}
	if c.webhookCertPath != "" {
		log.Info("this operator serves no webhook: --webhook-cert-path is not used", "path", c.webhookCertPath)
	}

	mgr, err := manager.New(ctrl.GetConfigOrDie(), opts)
	if err != nil {
		log.Error(err, "setting up")
		os.Exit(1)
	}
	log.Info("starting manager", "namespaces", opts.Namespaces)
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		log.Error(err, "running manager")
		os.Exit(1)
	}
}

// commandLine is what the flags set. Every flag openstack-operator gives the operators
// it runs is one of them (its bindata/operator/managers.yaml; see main_test.go).
type commandLine struct {
	manager         manager.Options
	zap             zap.Options
	namespaces      string
	qps             float64
	webhookCertPath string
}

func (c *commandLine) bind(fs *flag.FlagSet) {
	o := &c.manager
	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", "127.0.0.1:8080", "Address of the Prometheus metrics endpoint; 0 disables it.\n"+
		"Plain HTTP answers anyone who reaches it: the default binds localhost only; use --metrics-secure on other addresses.")
	fs.BoolVar(&o.MetricsSecure, "metrics-secure", false, "Serve metrics over HTTPS to callers Kubernetes authenticates and authorizes for GET /metrics only.")
	fs.StringVar(&o.MetricsCertDir, "metrics-cert-path", "", "Directory of the metrics server's certificate and key (implies --metrics-secure); a self-signed one when empty.")
	fs.StringVar(&o.MetricsCertName, "metrics-cert-name", "tls.crt", "File name of the metrics server's certificate in --metrics-cert-path.")
	fs.StringVar(&o.MetricsKeyName, "metrics-cert-key", "tls.key", "File name of the metrics server's key in --metrics-cert-path.")
	// openstack-operator passes it to every operator it runs when ENABLE_WEBHOOKS is set.
	fs.StringVar(&c.webhookCertPath, "webhook-cert-path", "", "Accepted for openstack-operator's Deployments and unused: this operator serves no webhook.")
	fs.StringVar(&o.ProbeAddr, "health-probe-bind-address", ":8081", "Address of the /healthz and /readyz endpoints (they tell nothing but liveness).")
	fs.BoolVar(&o.LeaderElection, "leader-elect", false, "Elect a leader so that only one replica reconciles.")
	fs.StringVar(&o.ClusterDNS, "cluster-dns", "", "Resolve Keystone's Service names (*.svc) through this DNS server (host:port);\n"+
		"for an operator run outside the cluster, such as the local cluster's 10.244.0.1:53.")
	fs.StringVar(&c.namespaces, "watch-namespace", os.Getenv("WATCH_NAMESPACE"), "Namespaces to watch, separated by commas (default $WATCH_NAMESPACE); empty for all.\n"+
		"With namespaces the operator needs Roles in them only (config/namespaced), and caches nothing elsewhere.")
	fs.StringVar(&o.PprofAddr, "pprof-bind-address", "0", "Address of Go's profiles (/debug/pprof), such as 127.0.0.1:6060; 0 disables them.")
	fs.Float64Var(&c.qps, "kube-api-qps", manager.DefaultKubeQPS, "Requests per second to the Kubernetes API (sustained).")
	fs.IntVar(&o.KubeBurst, "kube-api-burst", manager.DefaultKubeBurst, "Requests to the Kubernetes API allowed in a burst above --kube-api-qps.")
	fs.StringVar(&o.ClusterID, "cluster-id", os.Getenv("CLUSTER_ID"), "Names this cluster in the marks of what it registers in Keystone (default $CLUSTER_ID;\n"+
		"when empty, the UID of the kube-system namespace). Two clusters sharing a Keystone need different ones.")
	fs.IntVar(&o.RegistrationConcurrency, "registration-concurrency", registration.DefaultConcurrency,
		"KeystoneServices, KeystoneEndpoints and KeystoneApplicationCredentials each reconciled at once.")
	fs.BoolVar(&o.ClaimUnclusteredMarks, "claim-unclustered-marks", false,
		"Take over what an object of the same kind, namespace and name left in Keystone under an earlier version's mark,\n"+
			"which names no cluster (refused by default: two clusters sharing a Keystone may both have it). Set it when\n"+
			"no other cluster shared this Keystone before the upgrade.")
	fs.DurationVar(&o.OrphanGrace, "orphan-grace", registration.DefaultOrphanGrace,
		"How long Keystone must have been unreachable or refusing the operator's credentials before a deletion\n"+
			"annotated keystone.openstack.org/orphan-on-delete=true gives up and leaves its registration in Keystone.")
	fs.DurationVar(&o.RegionRecheck, "region-recheck", keystoneservice.DefaultRegionRecheck,
		"How often the owners' records of the services and users in each Keystone are read (two requests per\n"+
			"Keystone), to reconcile the KeystoneServices whose records other clusters sharing that Keystone changed.")
	fs.Int64Var(&o.APIDrainSeconds, "api-drain-seconds", deploy.DrainSeconds,
		"How long a stopping Keystone API pod keeps serving before httpd stops gracefully: time for every node's\n"+
			"kube-proxy, router and client to stop sending it requests. A change rolls the API pods.")
	c.zap.BindFlags(fs)
}

// options are the manager's options once the flags are parsed.
func (c *commandLine) options() manager.Options {
	o := c.manager
	o.Namespaces = manager.WatchNamespaces(c.namespaces)
	// As keystone-operator reads it (SetupDefaults): an empty containerImage gets it.
	o.KeystoneAPIImage = os.Getenv(keystonev1.ContainerImageEnv)
	o.KubeQPS = float32(c.qps)
	return o
}
