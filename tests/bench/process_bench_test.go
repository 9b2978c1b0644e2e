//go:build bench

package bench

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/keystone-stepwise/keystone-operator/cmd/manager"
	"github.com/keystone-stepwise/keystone-operator/tests/support/controlplane"
	"github.com/keystone-stepwise/keystone-operator/tests/support/localkeystone"
	"github.com/keystone-stepwise/keystone-operator/tests/support/testactor"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// processRun is one run of the process mode (BENCH_MEMORY=1): a control plane of its
// own, the bench's client c pointed at it, optionally the actor playing there, and a
// manager process (bin/manager) started against it by startManager.
type processRun struct {
	t          *testing.T
	root       string
	cfg        *rest.Config
	kubeconfig string
	stops      []func()
}

// newProcessRun starts a fresh control plane (and the actor on it, with actor) and
// points c at it until stop.
func newProcessRun(t *testing.T, root string, actor bool) *processRun {
	env, err := controlplane.Environment(root)
	must(err)
	cfg, err := env.Start()
	must(err)
	run := &processRun{t: t, root: root, cfg: cfg, kubeconfig: filepath.Join(t.TempDir(), "kubeconfig")}
	run.stops = append(run.stops, func() { _ = env.Stop() })
	previous := c
	c, err = client.NewWithWatch(cfg, client.Options{Scheme: manager.Scheme})
	must(err)
	run.stops = append(run.stops, func() { c = previous })
	must(controlplane.WriteKubeconfig(env, run.kubeconfig))
	if actor {
		// TestMain's actor has the same controllers' names, on another control plane.
		actors, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: manager.Scheme, Metrics: metricsserver.Options{BindAddress: "0"},
			Controller: config.Controller{SkipNameValidation: ptr.To(true)}})
		must(err)
		must(testactor.Setup(actors))
		ctx, cancel := context.WithCancel(context.Background()) //nolint:gosec // cancelled by stop, below
		done := make(chan struct{})
		go func() { defer close(done); must(actors.Start(ctx)) }()
		run.stops = append(run.stops, func() { cancel(); <-done })
	}
	return run
}

// stop ends what the run started, the manager first.
func (run *processRun) stop() {
	for i := len(run.stops) - 1; i >= 0; i-- {
		run.stops[i]()
	}
}

// managerProcess is the manager started by startManager.
type managerProcess struct {
	cmd        *exec.Cmd
	metricsURL string
	pprofURL   string
}

// startManager runs bin/manager against the run's control plane with its default flags
// and BENCH_MANAGER_FLAGS, its metrics (and, with profiled, Go's profiles) on ports of
// its own; BENCH_MANAGER_LOG=FILE keeps its log (each run overwrites it). It returns once
// the manager answers /readyz.
func (run *processRun) startManager(profiled bool) *managerProcess {
	return run.startBinary(filepath.Join(run.root, "bin", "manager"), profiled, strings.Fields(os.Getenv("BENCH_MANAGER_FLAGS")))
}

// upstreamManager is keystone-operator's manager binary, when BENCH_UPSTREAM_MANAGER
// names one (hack/upstream-manager.sh builds it): row 12 then measures it beside this
// suite's, in the same runs.
var upstreamManager = os.Getenv("BENCH_UPSTREAM_MANAGER")

// startUpstream runs keystone-operator's manager as startManager runs this suite's: its
// webhooks off and its metrics over plain HTTP, as a local run of it has them
// (ENABLE_WEBHOOKS=false, make run), its templates beside the binary.
func (run *processRun) startUpstream(profiled bool) *managerProcess {
	return run.startBinary(upstreamManager, profiled, []string{"--metrics-secure=false"}, "ENABLE_WEBHOOKS=false",
		"OPERATOR_TEMPLATES="+filepath.Join(filepath.Dir(upstreamManager), "templates"))
}

// startBinary runs a manager binary with the flags both managers take, then extra, and env.
func (run *processRun) startBinary(binary string, profiled bool, extra []string, env ...string) *managerProcess {
	metricsPort, err := localkeystone.FreePort()
	must(err)
	probePort, err := localkeystone.FreePort()
	must(err)
	m := &managerProcess{metricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)}
	args := []string{fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", metricsPort),
		fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", probePort)}
	if profiled {
		pprofPort, err := localkeystone.FreePort()
		must(err)
		args = append(args, fmt.Sprintf("--pprof-bind-address=127.0.0.1:%d", pprofPort))
		m.pprofURL = fmt.Sprintf("http://127.0.0.1:%d/debug/pprof", pprofPort)
	}
	args = append(args, extra...)
	m.cmd = exec.Command(binary, args...) //nolint:gosec // a manager binary the bench was given
	m.cmd.Env = append(append(os.Environ(), "KUBECONFIG="+run.kubeconfig), env...)
	if path := os.Getenv("BENCH_MANAGER_LOG"); path != "" {
		// The manager's log of the run: dropped Events, conflicts and errors that no
		// metric shows.
		logFile, err := os.Create(path) //nolint:gosec // the file the user named in BENCH_MANAGER_LOG
		must(err)
		run.stops = append(run.stops, func() { _ = logFile.Close() })
		m.cmd.Stdout, m.cmd.Stderr = logFile, logFile
	}
	must(m.cmd.Start())
	run.stops = append(run.stops, func() { _ = m.cmd.Process.Kill(); _ = m.cmd.Wait() })
	readyz := fmt.Sprintf("http://127.0.0.1:%d/readyz", probePort)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if resp, err := http.Get(readyz); err == nil { //nolint:gosec,noctx // the manager this test started
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return m
			}
		}
		if time.Now().After(deadline) {
			run.t.Fatalf("the manager did not answer %s within a minute", readyz)
		}
	}
}

// cpu is the processor time the manager has used since it started.
func (m *managerProcess) cpu() time.Duration { return processCPU(m.cmd.Process.Pid) }

// heap writes the manager's heap profile to path (go tool pprof reads it).
func (m *managerProcess) heap(path string) { m.pprof(path, "heap")() }

// profile writes the manager's processor profile over seconds to path (go tool pprof
// reads it); the returned function waits for it.
func (m *managerProcess) profile(path string, seconds int) func() {
	return m.pprof(path, fmt.Sprintf("profile?seconds=%d", seconds))
}

// pprof writes the manager's profile at /debug/pprof/<what> to path; the returned
// function waits for it.
func (m *managerProcess) pprof(path, what string) func() {
	return saveProfile(path, func() (*http.Response, error) {
		return http.Get(m.pprofURL + "/" + what) //nolint:noctx,gosec // our manager, at the port this test gave it
	})
}
