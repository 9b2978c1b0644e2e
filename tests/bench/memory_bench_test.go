//go:build bench

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/tests/support/controlplane"
	"github.com/keystone-stepwise/keystone-operator/tests/support/fakekeystone"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// memoryMode runs TestMemory alone: the manager runs as a process of its own
// (bin/manager, with its default flags unless BENCH_MANAGER_FLAGS says otherwise), so
// that its RSS is the operator's and nothing else's. BENCH_MANAGER_LOG=FILE keeps its log;
// BENCH_MEMORY_PROFILE=FILE writes its processor profile over the first 25 s of row 9's
// convergence, BENCH_MEMORY_HEAP=FILE its heap profile when row 7's RSS is read (of the
// last run; go tool pprof bin/manager FILE).
var memoryMode = os.Getenv("BENCH_MEMORY") == "1"

// memoryRowFile hands rows 7 and 9 from the memory run to the report of the main run.
const memoryRowFile = "bin/bench-row7.json"

// TestMemory: rows 7 (the manager's RSS) and 9 (registration throughput against the
// fake Keystone) with 1,000 KeystoneServices, their 1,000 KeystoneEndpoints and 20
// KeystoneAPIs; 3 runs, each on a control plane of its own with a fresh manager process.
func TestMemory(t *testing.T) {
	if !memoryMode {
		return // measured by its own run: BENCH_MEMORY=1 (make bench does both)
	}
	const n, apis = 1000, 20
	runs := 3
	if r, err := strconv.Atoi(os.Getenv("BENCH_MEMORY_RUNS")); err == nil && r > 0 {
		runs = r // fewer, to try a change: the rows want 3
	}
	root, err := controlplane.RepoRoot()
	must(err)
	var rss, secs, bare, ratios, cpuRatios, viewWrites, changes, conflicts, holdConflicts []float64
	var loaded, loadedRatios, loads, speedRatios, loadedSpeedRatios []float64
	var missing, drained, eventsPer []float64
	for r := 0; r < runs; r++ {
		run := memoryRun(t, root, n, apis)
		rss, secs = append(rss, run.rss), append(secs, run.converged.Seconds())
		missing, drained = append(missing, float64(run.events.missing)), append(drained, run.events.drained.Seconds())
		eventsPer = append(eventsPer, run.events.events/float64(n))
		took, bareCPU := bareRun(t, root, n, apis, run.final, 0)
		bound := took.Seconds()
		bare, ratios = append(bare, bound), append(ratios, run.converged.Seconds()/bound)
		cpuRatios = append(cpuRatios, run.cpu.seconds/bareCPU.seconds)
		speedRatios = append(speedRatios, inHostSpeed(ratios[r], run.cpu, bareCPU))
		t.Logf("run %d: the bare client converged the same registrations in %.1f s: %.2f×; processor time %.1f s against "+
			"the bare client's %.1f s: %.2f×; the speed probe's work took %d µs against %d µs: %.2f× in the host's speed",
			r+1, bound, ratios[r], run.cpu.seconds, bareCPU.seconds, cpuRatios[r], run.cpu.probe.Microseconds(),
			bareCPU.probe.Microseconds(), speedRatios[r])
		// The same again beside a load of the manager's processor share: what of the ratio
		// is the 2 cores the manager shares with the API server, not the API server's work.
		load := run.cpu.processors["manager"]
		withLoad, loadCPU := bareRun(t, root, n, apis, run.final, load)
		loads, loaded = append(loads, load), append(loaded, withLoad.Seconds())
		loadedRatios = append(loadedRatios, run.converged.Seconds()/withLoad.Seconds())
		loadedSpeedRatios = append(loadedSpeedRatios, inHostSpeed(loadedRatios[r], run.cpu, loadCPU))
		t.Logf("run %d: beside a load of the manager's %.2f processors, the bare client converged them in %.1f s: %.2f× "+
			"(%.2f× in the host's speed)", r+1, load, withLoad.Seconds(), loadedRatios[r], loadedSpeedRatios[r])
		viewWrites, changes = append(viewWrites, run.apiStatusWrites), append(changes, run.stateChanges)
		conflicts, holdConflicts = append(conflicts, run.apiStatusConflicts), append(holdConflicts, run.apiHoldConflicts)
		t.Logf("run %d: %d registrations Ready in %.1f s; RSS %.0f MiB; %.0f KeystoneAPI status writes for %.0f registration "+
			"state changes, %.0f of them conflicted; %.0f conflicted finalizer patches", r+1, n, run.converged.Seconds(), run.rss,
			run.apiStatusWrites, run.stateChanges, run.apiStatusConflicts, run.apiHoldConflicts)
	}
	flags := "its default flags"
	if f := os.Getenv("BENCH_MANAGER_FLAGS"); f != "" {
		flags = f
	}
	out := [][]string{
		{"7", fmt.Sprintf("memory: RSS of the manager process with %d KeystoneServices, %d KeystoneEndpoints (fake Keystone) and %d KeystoneAPIs converged; %d runs", n, n, apis, runs),
			fmt.Sprintf("median %.0f MiB (max %.0f; RSS read from /proc 10 s after all were Ready, 5 s after a scrape of the metrics)", median(rss), maxOf(rss)),
			"≤ 150 MiB", "70 MB RSS with 11 KeystoneAPIs", "make bench (BENCH_MEMORY=1 run)"},
		{"9", fmt.Sprintf("throughput: %d KeystoneServices with %d KeystoneEndpoints (two interfaces each), fake Keystone, %d namespaces, created at once by 8 clients; manager process with %s; %d runs",
			n, n, apis, flags, runs),
			fmt.Sprintf("all Ready in median %.1f s from the first create (min %.1f, max %.1f)", median(secs), minOf(secs), maxOf(secs)),
			"≤ 30 s on 2 cores", "—", "make bench (BENCH_MEMORY=1 run)"},
		{"13", fmt.Sprintf("bound at scale: row 9's time to Ready against a bare client's, which makes the writes the operator "+
			"makes for the same %d registrations (each one's finalizers, with the operator's optimistic lock, its statuses and an "+
			"Event; each KeystoneAPI's view once) and nothing else, woken by a watch, with the same API server, rate limits (200 "+
			"requests a second, burst 400) and workers per kind; it calls no Keystone; each on a control plane of its own; %d runs",
			n, runs),
			fmt.Sprintf("median %.2f× (operator median %.1f s, bare client median %.1f s; ratios %s); processor time of the "+
				"API server, etcd, the manager or bare client, and the bench process (the fake Keystone, the watch) "+
				"meanwhile: median %.2f× the bare client's (ratios %s): 2 cores stay busy in both; in the host's speed "+
				"during each (each time over a fixed work's processor time meanwhile): median %.2f× (ratios %s); the bare "+
				"client beside a process that keeps the manager's processor share busy (median %.2f processors), which "+
				"competes with the API server as the manager does: median %.2f× (median %.1f s; ratios %s; in the host's "+
				"speed %s)", median(ratios),
				median(secs), median(bare), joinFloats(ratios, "%.2f"), median(cpuRatios), joinFloats(cpuRatios, "%.2f"),
				median(speedRatios), joinFloats(speedRatios, "%.2f"), median(loads), median(loadedRatios), median(loaded),
				joinFloats(loadedRatios, "%.2f"), joinFloats(loadedSpeedRatios, "%.2f")),
			"≤ 1.1×", "—", "make bench (BENCH_MEMORY=1 run)"},
		{"9c", fmt.Sprintf("Events at scale: the conditions of row 9's %d KeystoneServices and %d KeystoneEndpoints that are not "+
			"Unknown (each changed at least once, and is owed an Event) against the Events about them, once the manager has "+
			"posted all it recorded (keystone_operator_events_pending 0); %d runs", n, n, runs),
			fmt.Sprintf("median %.0f conditions with no Event (max %.0f); median %.2f Events per registration (a KeystoneService "+
				"and its KeystoneEndpoint); all posted a median "+
				"%.1f s after the last registration was Ready (max %.1f)", median(missing), maxOf(missing), median(eventsPer),
				median(drained), maxOf(drained)),
			"0 conditions with no Event", "—", "make bench (BENCH_MEMORY=1 run)"},
		{"9b", fmt.Sprintf("consolidated view: status writes of the %d KeystoneAPIs (RegistrationsReady, status.registrations) while row 9's %d registrations converge; %d runs",
			apis, 2*n, runs),
			fmt.Sprintf("median %.0f writes for median %.0f registration state changes seen by a watch (%.2f per change; max %.0f writes); "+
				"median %.0f status writes refused with a conflict (409: the KeystoneAPI changed since the round read it; max %.0f); "+
				"besides, median %.0f of the registrations' finalizer patches on the KeystoneAPIs conflicted (max %.0f)",
				median(viewWrites), median(changes), median(viewWrites)/median(changes), maxOf(viewWrites), median(conflicts), maxOf(conflicts),
				median(holdConflicts), maxOf(holdConflicts)),
			"≤ 1 write per registration state change; status conflicts ≤ 10% of the status writes; 0 writes when converged (row 2b)", "—",
			"make bench (BENCH_MEMORY=1 run)"},
	}
	data, err := json.Marshal(out)
	must(err)
	must(os.WriteFile(filepath.Join(root, memoryRowFile), data, 0o600)) //nolint:gosec // the repository's own bin/
	t.Logf("row 7: %s; row 9: %s", out[0][2], out[1][2])
}

// inHostSpeed turns a ratio of two runs' times into one of their times in the host's
// speed during each: each time over the speed probe's.
func inHostSpeed(ratio float64, run, against cpuUse) float64 {
	return ratio * float64(against.probe) / float64(run.probe)
}

// memoryRunResult is what one memory run measured.
type memoryRunResult struct {
	rss       float64       // the manager's RSS, MiB
	converged time.Duration // from the first create until all are Ready
	// cpu is the processor time the API server, etcd, the manager and the bench process
	// (the fake Keystone, the watch) used meanwhile, and the host's speed.
	cpu cpuUse
	// apiStatusWrites and apiStatusConflicts are the KeystoneAPIs' successful and
	// conflicted status writes meanwhile, apiHoldConflicts the conflicted finalizer
	// patches the registrations made on them; stateChanges the registrations' state
	// changes.
	apiStatusWrites, apiStatusConflicts, apiHoldConflicts, stateChanges float64
	// final is what the operator left, for row 13's bare client.
	final *finalStates
	// events is row 9c.
	events eventAudit
}

// memoryRun starts a control plane and a manager process, converges n registrations
// spread over apis namespaces (each with an external KeystoneAPI at one fake Keystone),
// and returns what it measured.
func memoryRun(t *testing.T, root string, n, apis int) memoryRunResult {
	ctx := context.Background()
	run := newProcessRun(t, root, false)
	defer run.stop()
	cfg := run.cfg
	ks := fakekeystone.New("admin", "bench-admin")
	defer ks.Close()
	// The metrics are served, and scraped once before the RSS is read, as Prometheus
	// would: the condition gauges are made at each scrape.
	profilePath, heapPath := os.Getenv("BENCH_MEMORY_PROFILE"), os.Getenv("BENCH_MEMORY_HEAP")
	mgr := run.startManager(profilePath != "" || heapPath != "")
	cmd, metricsURL := mgr.cmd, mgr.metricsURL

	namespaces := make([]string, apis)
	for i := range namespaces {
		ns := namespace(ctx, false)
		namespaces[i] = ns
		externalKeystoneAPI(ctx, ns, ks.URL, "bench-admin")
	}
	for _, ns := range namespaces {
		for deadline := time.Now().Add(time.Minute); !isReady(ctx, client.ObjectKey{Namespace: ns, Name: "keystone"}, &keystonev1.KeystoneAPI{}); {
			if time.Now().After(deadline) {
				t.Fatalf("KeystoneAPI of %s not Ready after a minute", ns)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	ready := watchReady(ctx, "")
	defer ready.Stop()
	pids := childrenNamed("kube-apiserver", "etcd")
	pids["manager"], pids["bench"] = cmd.Process.Pid, os.Getpid()
	// Read before the processor time's window: reading it is not the run's work.
	before := apiserverRequests(cfg)
	cpu := cpuShares(t, pids)
	keystoneBefore, connectionsBefore := ks.Requests(), ks.Connections.Load()
	start := time.Now()
	profiled := profileAPIServer(cfg, "")
	managerProfiled := func() {}
	if profilePath != "" {
		// Each run overwrites it: the last run's.
		managerProfiled = mgr.profile(profilePath, 25)
	}
	benchProfiled := profileBench("")
	createAll(ctx, namespaces, n)
	created := time.Since(start)
	// Watched, not listed: the harness's own load on the API server (which the
	// operator shares) stays small.
	for ready.Count() < n {
		if time.Since(start) > 10*time.Minute {
			t.Fatalf("only %d of %d registrations Ready after 10 minutes", ready.Count(), n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	converged := time.Since(start)
	// Read when the last is Ready, as the bare client's (row 13): what comes after (the
	// views settling, the Events that waited) is not charged to the convergence.
	used := cpu()
	atReady := apiserverRequests(cfg)
	keystoneAtReady, connectionsAtReady := ks.Requests(), ks.Connections.Load()
	// The consolidated view settles after the last Ready: wait until the KeystoneAPIs
	// report every registration Ready (bounded), then count its writes (row 9b).
	for deadline := time.Now().Add(time.Minute); !viewsConverged(ctx, namespaces, n/apis); {
		if time.Now().After(deadline) {
			t.Fatalf("the KeystoneAPIs' RegistrationsReady did not count every registration within a minute")
		}
		time.Sleep(200 * time.Millisecond)
	}
	stateChanges := float64(ready.Changes())
	t.Logf("created in %.1f s, all Ready in %.1f s; processor time meanwhile: %s", created.Seconds(), converged.Seconds(), used.text)
	after := apiserverRequests(cfg)
	profiled() // after what the run is charged: a profile outlasting the convergence adds idle time
	managerProfiled()
	benchProfiled()
	t.Logf("mutating requests the API server answered meanwhile, per registration: %s", perItem(atReady.writes, before.writes, n, ""))
	t.Logf("seconds the API server spent answering them (latency, not processor time), per registration: %s",
		perItem(atReady.seconds, before.seconds, n, " s"))
	t.Logf("reads the API server answered meanwhile, per registration: %s", perItem(atReady.reads, before.reads, n, ""))
	t.Logf("requests to the fake Keystone, per registration: %s; connections the manager opened to it meanwhile: %d",
		perItem(floats(keystoneAtReady), floats(keystoneBefore), n, ""), connectionsAtReady-connectionsBefore)
	w := keystoneAPIWrites(after.writes, before.writes)
	time.Sleep(5 * time.Second)
	t.Logf("RSS before the scrape: %.0f MiB", rssMiB(cmd.Process.Pid))
	logClientRequests(t, metricsURL)
	time.Sleep(5 * time.Second)
	rss := rssMiB(cmd.Process.Pid)
	if heapPath != "" {
		mgr.heap(heapPath) // what is live when the RSS is read (each run overwrites it: the last run's)
	}
	events := auditEvents(ctx, metricsURL, namespaces, start.Add(converged))
	t.Logf("Events: all posted %.1f s after the last registration was Ready; %.0f about the registrations (%.2f per "+
		"registration), %.0f dropped; %d of their %d conditions not Unknown have none", events.drained.Seconds(), events.events,
		events.events/float64(n), events.dropped, events.missing, events.conditions)
	return memoryRunResult{rss: rss, events: events, converged: converged, cpu: used, apiStatusWrites: w.status,
		apiStatusConflicts: w.statusConflicts, apiHoldConflicts: w.otherConflicts, stateChanges: stateChanges,
		final: readFinalStates(ctx, namespaces)}
}

// viewsConverged tells whether every namespace's KeystoneAPI counts perNamespace
// KeystoneServices and as many KeystoneEndpoints, all Ready, with RegistrationsReady True.
func viewsConverged(ctx context.Context, namespaces []string, perNamespace int) bool {
	for _, ns := range namespaces {
		api := &keystonev1.KeystoneAPI{}
		if c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "keystone"}, api) != nil || api.Status.Registrations == nil ||
			!api.Status.Conditions.IsTrue(keystonev1.KeystoneAPIRegistrationsReady) {
			return false
		}
		want := keystonev1.RegistrationCount{Total: int32(perNamespace), Ready: int32(perNamespace)} //nolint:gosec // small
		if r := api.Status.Registrations; r.KeystoneServices != want || r.KeystoneEndpoints != want {
			return false
		}
	}
	return true
}

// apiWrites counts writes to KeystoneAPIs: successful status writes, status writes
// refused with a conflict, and other writes (the registrations' finalizer patches)
// refused with a conflict.
type apiWrites struct{ status, statusConflicts, otherConflicts float64 }

// keystoneAPIWrites is, from the API server's request counts before and after, the
// writes to KeystoneAPIs meanwhile.
func keystoneAPIWrites(after, before map[string]float64) apiWrites {
	var w apiWrites
	for key, v := range after {
		f := strings.Fields(key) // verb resource code
		if len(f) != 3 || !strings.HasPrefix(f[1], "keystoneapis") {
			continue
		}
		status := f[1] == "keystoneapis/status"
		switch {
		case f[2] == "409" && status:
			w.statusConflicts += v - before[key]
		case f[2] == "409":
			w.otherConflicts += v - before[key]
		case status && strings.HasPrefix(f[2], "2"):
			w.status += v - before[key]
		}
	}
	return w
}

// logClientRequests scrapes the manager's metrics and logs its requests to the
// Kubernetes API by verb and code, and its reconciles by controller and result: what
// the run cost the API server, and how often the manager woke.
func logClientRequests(t *testing.T, url string) {
	body := scrape(url)
	series := 0
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "rest_client_requests_total") || strings.HasPrefix(line, "controller_runtime_reconcile_total") {
			t.Log(line)
		}
		if strings.HasPrefix(line, "keystone_operator_condition{") {
			series++
		}
	}
	t.Logf("the scrape held %d keystone_operator_condition series (%d bytes in all)", series, len(body))
	values := unlabelled(body)
	memstat := func(name string) string {
		if bytes, ok := values["go_memstats_"+name+"_bytes"]; ok {
			return fmt.Sprintf("%.0f MiB", bytes/(1<<20))
		}
		return "(not exported)"
	}
	t.Logf("the manager's memory at the scrape (go_memstats): heap in use %s, next collection at %s, heap from the system %s "+
		"(%s of it released), all the Go runtime holds %s", memstat("heap_inuse"), memstat("next_gc"),
		memstat("heap_sys"), memstat("heap_released"), memstat("sys"))
}

// unlabelled is the value of each series without labels on the metrics page body
// ("name value" lines), by name.
func unlabelled(body string) map[string]float64 {
	values := map[string]float64{}
	for _, line := range strings.Split(body, "\n") {
		if f := strings.Fields(line); len(f) == 2 {
			if v, err := strconv.ParseFloat(f[1], 64); err == nil {
				values[f[0]] = v
			}
		}
	}
	return values
}

// scrape is the metrics page of the manager at url.
func scrape(url string) string {
	resp, err := http.Get(url) //nolint:gosec,noctx // the manager this test started
	must(err)
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	must(err)
	return string(body)
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

// criticalRowFile hands row 10 from make bench-pods (tests/bench/critical, on the local
// cluster) to the report of the main run, disruptionRowFile row 11 from make
// bench-disruption (tests/bench/disruption).
const (
	criticalRowFile   = "bin/bench-row10.json"
	disruptionRowFile = "bin/bench-row11.json"
)

// rowsFrom reads the rows another run wrote to file (under root), if any.
func rowsFrom(root, file string) ([]row, bool) {
	data, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		return nil, false
	}
	var fields [][]string
	if json.Unmarshal(data, &fields) != nil {
		return nil, false
	}
	var out []row
	for _, f := range fields {
		if len(f) != 6 {
			return nil, false
		}
		out = append(out, row{f[0], f[1], f[2], f[3], f[4], f[5]})
	}
	return out, true
}

// profileAPIServer takes a processor profile of kube-apiserver over the first 25 s of a
// run's convergence, when BENCH_APISERVER_PROFILE names the file to write (each run
// overwrites it; go tool pprof reads it), that file with suffix appended; the returned
// function waits for it.
func profileAPIServer(cfg *rest.Config, suffix string) func() {
	path := os.Getenv("BENCH_APISERVER_PROFILE")
	if path == "" {
		return func() {}
	}
	return saveProfile(path+suffix, func() (*http.Response, error) {
		return apiserverGet(cfg, "/debug/pprof/profile?seconds=25"), nil
	})
}

// saveProfile writes the profile that get answers to path, from a goroutine of its
// own (a profile takes the seconds it covers); the returned function waits for it.
func saveProfile(path string, get func() (*http.Response, error)) func() {
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp, err := get()
		must(err)
		defer func() { _ = resp.Body.Close() }()
		data, err := io.ReadAll(resp.Body)
		must(err)
		must(os.WriteFile(path, data, 0o600)) //nolint:gosec // the file the user named (BENCH_*_PROFILE)
	}()
	return func() { <-done }
}

// profileBench takes a processor profile of this process (the fake Keystone, the watch,
// the creates; in row 13's run the bare client) over the first 25 s of a run's
// convergence, when BENCH_PROCESS_PROFILE names the file to write (each run overwrites
// it), that file with suffix appended; the returned function waits for it.
func profileBench(suffix string) func() {
	path := os.Getenv("BENCH_PROCESS_PROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path + suffix) //nolint:gosec // the file the user named in BENCH_PROCESS_PROFILE
	must(err)
	must(pprof.StartCPUProfile(f))
	end, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-end: // converged within the 25 s
		case <-time.After(25 * time.Second):
		}
		pprof.StopCPUProfile()
		must(f.Close())
	}()
	return func() { close(end); <-done }
}

// floats is counts as float64s, for perRegistration.
func floats(counts map[string]int) map[string]float64 {
	out := make(map[string]float64, len(counts))
	for k, v := range counts {
		out[k] = float64(v)
	}
	return out
}
