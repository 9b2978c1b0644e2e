// Command devrun runs the operator for development (`make run`): against the current
// context of the kubeconfig kubectl would use (KUBECONFIG, else ~/.kube/config), as
// kubebuilder's `make run` does, or, when none is configured, against a local cluster
// it starts, printing the kubeconfig to use with kubectl. The local cluster is the
// single-node Kubernetes of hack/cluster.sh, where Keystone's pods really run
// (-local=cluster, needs root), or a control plane without nodes
// (-local=control-plane); either, named, is used whatever kubeconfig exists (the
// scripts that need it). It installs the CRDs either way and stops on exit what it
// started.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/keystone-stepwise/keystone-operator/cmd/manager"
	"github.com/keystone-stepwise/keystone-operator/tests/support/controlplane"
	"go.uber.org/zap/zapcore"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "devrun:", err)
		os.Exit(1)
	}
}

func run() error {
	var opts manager.Options
	flag.StringVar(&opts.MetricsAddr, "metrics-bind-address", "127.0.0.1:8080", "Address of the Prometheus metrics endpoint; 0 disables it.")
	flag.StringVar(&opts.ProbeAddr, "health-probe-bind-address", "127.0.0.1:8081", "Address of /healthz and /readyz; 0 disables them.")
	local := flag.String("local", "auto", "Where to run: auto (the current kubeconfig context, else a local cluster), kubeconfig, "+
		"cluster (a local single-node cluster) or control-plane (a local control plane without nodes).")
	runManager := flag.Bool("manager", true, "Run the operator here; with false, only what it needs (cluster, CRDs, actor) until interrupted, for an operator run elsewhere (make e2e runs it in the cluster).")
	actor := flag.String("actor", "", "On the local cluster, also run this test actor binary (tests/e2e/actor), which plays mariadb-operator and infra-operator.")
	zapOpts := zap.Options{Development: true, Level: zapcore.InfoLevel}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))

	// First of all, so that no Ctrl-C kills the process before the control plane it
	// starts is stopped; unlike ctrl.SetupSignalHandler, a second Ctrl-C does not exit
	// at once either.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	root, err := controlplane.RepoRoot()
	if err != nil {
		return err
	}
	target := *local
	if target == "auto" {
		target = "cluster"
		if current() != nil {
			target = "kubeconfig"
		}
	}
	cfg, hint, release, err := connect(root, target, *actor, &opts)
	defer release()
	if err != nil {
		return err
	}
	fmt.Print(hint)
	if !*runManager {
		fmt.Println("devrun: -manager=false: not running the operator; Ctrl-C stops what devrun started")
		<-ctx.Done()
		return nil
	}
	mgr, err := manager.New(cfg, opts)
	if err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// connect reaches the cluster of target (kubeconfig, cluster or control-plane), starting
// it when it is a local one, and installs the CRDs there. It returns its configuration,
// what to print once the CRDs are in (how to use a cluster devrun started), and what
// stops what it started (to be called even on an error).
func connect(root, target, actor string, opts *manager.Options) (*rest.Config, string, func(), error) {
	release := func() {}
	var hint, path string
	switch target {
	case "kubeconfig":
		cfg, err := useCurrent()
		if err != nil {
			return nil, "", release, err
		}
		return cfg, "", release, controlplane.InstallCRDs(cfg, root)
	case "cluster":
		kubeconfig, stopAll, err := startClusterAndActor(root, actor)
		if err != nil {
			return nil, "", release, err
		}
		release = stopAll
		path = kubeconfig
		// The operator runs on the host: Keystone's Service names resolve through the
		// cluster's DNS, as they would in a pod.
		opts.ClusterDNS = "10.244.0.1:53"
		hint = nextSteps(root, "the local cluster", path,
			"kubectl apply -f config/samples/osp-secret.yaml -f config/samples/keystone_v1beta1_keystoneapi.yaml -f config/samples/local-cluster/",
			"kubectl get keystoneapi -w", "kubectl keystone tree")
	case "control-plane":
		env, err := controlplane.Environment(root)
		if err != nil {
			return nil, "", release, err
		}
		if _, err := env.Start(); err != nil {
			return nil, "", release, fmt.Errorf("starting the local control plane: %w", err)
		}
		release = func() { _ = env.Stop() }
		path = filepath.Join(root, "bin", "run", "kubeconfig")
		if err := controlplane.WriteKubeconfig(env, path); err != nil {
			return nil, "", release, err
		}
		hint = nextSteps(root, "the local control plane", path,
			"kubectl apply -f config/samples/osp-secret.yaml -f config/samples/keystone_v1beta1_keystoneapi.yaml",
			"kubectl keystone tree")
	default:
		return nil, "", release, fmt.Errorf("-local=%s: want auto, kubeconfig, cluster or control-plane", target)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, "", release, fmt.Errorf("reading kubeconfig %s: %w", path, err)
	}
	return cfg, hint, release, controlplane.InstallCRDs(cfg, root)
}

// current is the kubeconfig kubectl would use, as loaded (KUBECONFIG, else
// ~/.kube/config), when it names a current context; nil when none is configured.
func current() *clientcmdapi.Config {
	raw, err := clientcmd.NewDefaultClientConfigLoadingRules().Load()
	if err != nil || raw.CurrentContext == "" || raw.Contexts[raw.CurrentContext] == nil {
		return nil
	}
	return raw
}

// useCurrent is the client configuration of the current context, said before it is used.
func useCurrent() (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	raw := current()
	if raw == nil {
		return nil, fmt.Errorf("no current context in %s: kubectl config use-context NAME, or -local=cluster for a local cluster",
			strings.Join(rules.GetLoadingPrecedence(), ":"))
	}
	context := raw.Contexts[raw.CurrentContext]
	server := ""
	if cluster := raw.Clusters[context.Cluster]; cluster != nil {
		server = cluster.Server
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig: %w", err)
	}
	fmt.Printf("devrun: running against context %s (cluster %s at %s) of %s\n", raw.CurrentContext, context.Cluster, server,
		strings.Join(rules.GetLoadingPrecedence(), ":"))
	return cfg, nil
}

// nextSteps says how to use a cluster devrun started: its kubeconfig, the kubectl built
// with envtest's binaries (of the cluster's version, for machines without one), the
// plugin kubectl keystone (bin/kubectl-keystone, which make run builds) and the commands.
func nextSteps(root, what, kubeconfig string, commands ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "devrun: %s is up; in another shell:\n\n    export KUBECONFIG=%s\n", what, kubeconfig)
	path := []string{filepath.Join(root, "bin")}
	// make run points KUBEBUILDER_ASSETS at envtest's binaries, kubectl among them.
	if assets := os.Getenv("KUBEBUILDER_ASSETS"); assets != "" {
		path = append(path, assets)
	}
	fmt.Fprintf(&b, "    export PATH=%s:$PATH\n", strings.Join(path, ":"))
	for _, c := range commands {
		fmt.Fprintf(&b, "    %s\n", c)
	}
	b.WriteString("\n")
	return b.String()
}

// startClusterAndActor starts the local cluster and, when actor is set, the test actor
// on it; stop stops both, the actor first.
func startClusterAndActor(root, actor string) (kubeconfig string, stop func(), err error) {
	stopCluster, kubeconfig, err := startCluster(root)
	if err != nil || actor == "" {
		return kubeconfig, stopCluster, err
	}
	stopActor, err := startActor(actor, kubeconfig)
	if err != nil {
		stopCluster()
		return "", nil, err
	}
	return kubeconfig, func() { stopActor(); stopCluster() }, nil
}

// startCluster starts the local single-node cluster (hack/cluster.sh up) unless it runs
// already; it returns its kubeconfig and a function that stops it again if this call
// started it.
func startCluster(root string) (stop func(), kubeconfig string, err error) {
	cluster := func(command string) *exec.Cmd {
		return exec.Command(filepath.Join(root, "hack", "cluster.sh"), command) //nolint:gosec // the repository's own script
	}
	status, _ := cluster("status").Output()
	running := strings.Contains(string(status), "kubelet running")
	up := cluster("up")
	up.Stderr = os.Stderr
	out, err := up.Output()
	if err != nil {
		return nil, "", fmt.Errorf("starting the local cluster (hack/cluster.sh up): %w", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	kubeconfig = lines[len(lines)-1]
	stop = func() {
		if running {
			fmt.Println("devrun: the local cluster was running before; it keeps running")
			return
		}
		down := cluster("down")
		down.Stdout, down.Stderr = os.Stdout, os.Stderr
		_ = down.Run()
	}
	return stop, kubeconfig, nil
}

// startActor runs the test actor against kubeconfig, logging to bin/run/actor.log; the
// returned function stops it.
func startActor(binary, kubeconfig string) (stop func(), err error) {
	logPath := filepath.Join(filepath.Dir(binary), "run", "actor.log")
	if err := os.MkdirAll(filepath.Dir(logPath), 0o750); err != nil {
		return nil, err
	}
	logFile, err := os.Create(filepath.Clean(logPath))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(binary)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("starting the test actor %s: %w", binary, err)
	}
	fmt.Printf("devrun: the test actor plays mariadb-operator and infra-operator (log: %s)\n", logPath)
	return func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		_ = logFile.Close()
	}, nil
}
