// Command devrun runs the operator for development (`make run`): against the cluster
// of KUBECONFIG, or, when none is set, against a local control plane it starts,
// printing the kubeconfig to use with kubectl. It installs the CRDs either way.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/keystone-stepwise/keystone-operator/internal/controlplane"
	"github.com/keystone-stepwise/keystone-operator/internal/manager"
	"go.uber.org/zap/zapcore"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
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
	var cfg *rest.Config
	if path := os.Getenv("KUBECONFIG"); path != "" {
		if cfg, err = clientcmd.BuildConfigFromFlags("", path); err != nil {
			return fmt.Errorf("reading KUBECONFIG %s: %w", path, err)
		}
		fmt.Printf("devrun: using the cluster of KUBECONFIG=%s\n", path)
		if err := controlplane.InstallCRDs(cfg, root); err != nil {
			return err
		}
	} else {
		env, err := controlplane.Environment(root)
		if err != nil {
			return err
		}
		if cfg, err = env.Start(); err != nil {
			return fmt.Errorf("starting the local control plane: %w", err)
		}
		defer func() { _ = env.Stop() }()
		kubeconfig := filepath.Join(root, "bin", "run", "kubeconfig")
		if err := controlplane.WriteKubeconfig(env, kubeconfig); err != nil {
			return err
		}
		fmt.Printf("devrun: local control plane is up; in another shell:\n\n    export KUBECONFIG=%s\n    kubectl apply -f config/samples/\n\n", kubeconfig)
	}
	mgr, err := manager.New(cfg, opts)
	if err != nil {
		return err
	}
	return mgr.Start(ctx)
}
