//go:build bench

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/controlplane"
	"github.com/keystone-stepwise/keystone-operator/internal/fakekeystone"
	"github.com/keystone-stepwise/keystone-operator/internal/manager"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// memoryMode runs TestMemory alone: the manager runs as a process of its own
// (bin/manager), so that its RSS is the operator's and nothing else's.
var memoryMode = os.Getenv("BENCH_MEMORY") == "1"

// memoryRowFile hands row 7 from the memory run to the report of the main run.
const memoryRowFile = "bin/bench-row7.json"

// TestMemory: row 7, the manager's RSS with 1,000 KeystoneServices and one KeystoneAPI
// converged; 3 runs, each on a control plane of its own with a fresh manager process.
func TestMemory(t *testing.T) {
	if !memoryMode {
		return // measured by its own run: BENCH_MEMORY=1 (make bench does both)
	}
	const runs, n = 3, 1000
	root, err := controlplane.RepoRoot()
	must(err)
	var rss, secs []float64
	for r := 0; r < runs; r++ {
		mib, converged := memoryRun(t, root, n)
		rss, secs = append(rss, mib), append(secs, converged.Seconds())
	}
	r := row{"7", fmt.Sprintf("memory: RSS of the manager process with %d KeystoneServices (fake Keystone) and 1 KeystoneAPI converged; %d runs", n, runs),
		fmt.Sprintf("median %.0f MiB (max %.0f; all %d Ready in median %.0f s; RSS read from /proc 10 s after)", median(rss), maxOf(rss), n, median(secs)),
		"under 150 MiB", "70 MB RSS with 11 KeystoneAPIs", "make bench (BENCH_MEMORY=1 run)"}
	data, err := json.Marshal([]string{r.n, r.what, r.measured, r.target, r.reference, r.command})
	must(err)
	must(os.WriteFile(filepath.Join(root, memoryRowFile), data, 0o600))
	t.Logf("row 7: %s", r.measured)
}

// memoryRun starts a control plane and a manager process, converges n KeystoneServices,
// and returns the manager's RSS and the time to converge.
func memoryRun(t *testing.T, root string, n int) (float64, time.Duration) {
	ctx := context.Background()
	env, err := controlplane.Environment(root)
	must(err)
	cfg, err := env.Start()
	must(err)
	defer func() { _ = env.Stop() }()
	previous := c
	c, err = client.NewWithWatch(cfg, client.Options{Scheme: manager.Scheme})
	must(err)
	defer func() { c = previous }()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	must(controlplane.WriteKubeconfig(env, kubeconfig))
	ks := fakekeystone.New("admin", "bench-admin")
	defer ks.Close()
	cmd := exec.Command(filepath.Join(root, "bin", "manager"), "--metrics-bind-address=0", "--health-probe-bind-address=0") //nolint:gosec // our own binary
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	must(cmd.Start())
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

	ns := namespace(ctx, false)
	must(c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "osp-secret", Namespace: ns},
		StringData: map[string]string{"AdminPassword": "bench-admin", "ServicePassword": "bench-service"}}))
	api := keystoneAPI(ns)
	api.Spec.DatabaseInstance, api.Spec.ExternalKeystoneAPI = "", true
	api.Spec.Override.Service = &keystonev1.ServiceOverrides{
		Public:   &keystonev1.EndpointOverride{EndpointURL: ptr.To(ks.URL)},
		Internal: &keystonev1.EndpointOverride{EndpointURL: ptr.To(ks.URL)},
	}
	must(c.Create(ctx, api))
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("svc%04d", i)
		createRegistration(ctx, ns, name)
	}
	start := time.Now()
	for readyServices(ctx, ns) < n {
		if time.Since(start) > 10*time.Minute {
			t.Fatalf("only %d of %d KeystoneServices Ready after 10 minutes", readyServices(ctx, ns), n)
		}
		time.Sleep(500 * time.Millisecond)
	}
	converged := time.Since(start)
	time.Sleep(10 * time.Second)
	return rssMiB(cmd.Process.Pid), converged
}

// rssMiB reads VmRSS of a process.
func rssMiB(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	must(err)
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, err := strconv.ParseFloat(f[1], 64)
			must(err)
			return kb / 1024
		}
	}
	panic("no VmRSS")
}

// memoryRow reads row 7 written by the memory run, if any.
func memoryRow(root string) (row, bool) {
	data, err := os.ReadFile(filepath.Join(root, memoryRowFile))
	if err != nil {
		return row{}, false
	}
	var f []string
	if json.Unmarshal(data, &f) != nil || len(f) != 6 {
		return row{}, false
	}
	return row{f[0], f[1], f[2], f[3], f[4], f[5]}, true
}
