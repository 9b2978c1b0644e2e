package benchcluster

import (
	"os"
	"testing"

	"github.com/keystone-stepwise/keystone-operator/cmd/manager"
	"github.com/keystone-stepwise/keystone-operator/tests/support/controlplane"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Connect returns the local cluster's configuration and a client of it, from the
// kubeconfig in BENCH_KUBECONFIG (which the make target's script sets), and the
// repository's root. Without BENCH_KUBECONFIG it skips t, naming target and script, the
// make target and the script that run the benchmark.
func Connect(t *testing.T, target, script string) (*rest.Config, client.WithWatch, string) {
	t.Helper()
	kubeconfig := os.Getenv("BENCH_KUBECONFIG")
	if kubeconfig == "" {
		t.Skipf("BENCH_KUBECONFIG is not set: make %s (%s) runs this on the local cluster", target, script)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: manager.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	root, err := controlplane.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return cfg, c, root
}
