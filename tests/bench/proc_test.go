//go:build bench

package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/keystone-stepwise/keystone-operator/tests/support/procstat"
)

// processCPU returns the processor time (user and system) a process has used so far.
func processCPU(pid int) time.Duration {
	st, err := procstat.Read(pid)
	must(err)
	return st.CPU
}

// childrenNamed returns the pids of this process's children whose executable's base
// name is one of names (envtest's etcd and kube-apiserver), by name: of several of one
// name, the last started (of two started in one clock tick, the larger pid), the run's
// own. TestMain's control plane, idle while a run measures its own, is a child too, and
// procstat.All lists processes as os.ReadDir sorts /proc, by name: taking the last
// listed measured TestMain's whenever its pid sorted after the run's (9912 after
// 10240).
func childrenNamed(names ...string) map[string]int {
	all, err := procstat.All()
	must(err)
	out, started := map[string]int{}, map[string]uint64{}
	for _, st := range all {
		if st.PPID != os.Getpid() {
			continue
		}
		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", st.PID))
		if err != nil {
			continue
		}
		name := filepath.Base(exe)
		pid, seen := out[name]
		if slices.Contains(names, name) && (!seen || st.Start > started[name] || st.Start == started[name] && st.PID > pid) {
			out[name], started[name] = st.PID, st.Start
		}
	}
	return out
}

// cpuShares measures the processor time each process uses between its creation and
// the call of the function it returns, which describes it ("kube-apiserver 30.1 s, ...")
// and returns their sum, in seconds.
func cpuShares(pids map[string]int) func() (string, float64) {
	before := map[string]time.Duration{}
	for name, pid := range pids {
		before[name] = processCPU(pid)
	}
	start := time.Now()
	return func() (string, float64) {
		wall := time.Since(start)
		var parts []string
		total := 0.0
		for _, name := range []string{"kube-apiserver", "etcd", "manager", "bench"} {
			pid, ok := pids[name]
			if !ok {
				continue
			}
			used := processCPU(pid) - before[name]
			parts = append(parts, fmt.Sprintf("%s %.1f s (%.2f processors)", name, used.Seconds(), used.Seconds()/wall.Seconds()))
			total += used.Seconds()
		}
		return fmt.Sprintf("%s; %.1f s in all (%.2f processors)", strings.Join(parts, ", "), total, total/wall.Seconds()), total
	}
}
