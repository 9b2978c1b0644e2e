// Command manager runs the Keystone operator's controllers.
package main

import (
	"flag"
	"os"

	"github.com/keystone-stepwise/keystone-operator/controllers/registration"
	"github.com/keystone-stepwise/keystone-operator/internal/manager"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

func main() {
	var opts manager.Options
	flag.StringVar(&opts.MetricsAddr, "metrics-bind-address", "127.0.0.1:8080", "Address of the Prometheus metrics endpoint; 0 disables it.\n"+
		"Plain HTTP answers anyone who reaches it: the default binds localhost only; use --metrics-secure on other addresses.")
	flag.BoolVar(&opts.MetricsSecure, "metrics-secure", false, "Serve metrics over HTTPS to callers Kubernetes authenticates and authorizes for GET /metrics only.")
	flag.StringVar(&opts.ProbeAddr, "health-probe-bind-address", ":8081", "Address of the /healthz and /readyz endpoints (they tell nothing but liveness).")
	flag.BoolVar(&opts.LeaderElection, "leader-elect", false, "Elect a leader so that only one replica reconciles.")
	flag.StringVar(&opts.ClusterDNS, "cluster-dns", "", "Resolve Keystone's Service names (*.svc) through this DNS server (host:port);\n"+
		"for an operator run outside the cluster, such as the local cluster's 10.244.0.1:53.")
	var namespaces string
	flag.StringVar(&namespaces, "watch-namespace", os.Getenv("WATCH_NAMESPACE"), "Namespaces to watch, separated by commas (default $WATCH_NAMESPACE); empty for all.\n"+
		"With namespaces the operator needs Roles in them only (config/namespaced), and caches nothing elsewhere.")
	flag.StringVar(&opts.PprofAddr, "pprof-bind-address", "0", "Address of Go's profiles (/debug/pprof), such as 127.0.0.1:6060; 0 disables them.")
	var qps float64
	flag.Float64Var(&qps, "kube-api-qps", manager.DefaultKubeQPS, "Requests per second to the Kubernetes API (sustained).")
	flag.IntVar(&opts.KubeBurst, "kube-api-burst", manager.DefaultKubeBurst, "Requests to the Kubernetes API allowed in a burst above --kube-api-qps.")
	flag.IntVar(&opts.RegistrationConcurrency, "registration-concurrency", registration.DefaultConcurrency,
		"KeystoneServices, KeystoneEndpoints and KeystoneApplicationCredentials each reconciled at once.")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	opts.Namespaces = manager.WatchNamespaces(namespaces)
	opts.KubeQPS = float32(qps)
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	log := ctrl.Log.WithName("setup")

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
