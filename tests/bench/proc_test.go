//go:build bench

package bench

import (
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/keystone-stepwise/keystone-operator/tests/support/procstat"
	"golang.org/x/sys/unix"
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

// cpuUse is what cpuShares measured.
type cpuUse struct {
	text       string             // "kube-apiserver 30.1 s (1.02 processors), ...; 50.2 s in all but the load (1.71 processors); the speed probe's work took 3210 µs"
	seconds    float64            // the processes' processor time, summed
	processors map[string]float64 // each one's processor time over the wall time
	// probe is how long speedProbe's fixed work took, median, in processor time: how
	// fast the host ran meanwhile.
	probe time.Duration
}

// cpuShares measures the processor time each process uses between its creation and
// the call of the function it returns, and the host's speed meanwhile (speedProbe). A
// load (startLoad) is named but not summed: it stands for no work of the run. The probe
// stops with the test if the function is not called.
func cpuShares(t *testing.T, pids map[string]int) func() cpuUse {
	before := map[string]time.Duration{}
	for name, pid := range pids {
		before[name] = processCPU(pid)
	}
	probe := speedProbe()
	t.Cleanup(func() { probe() })
	start := time.Now()
	return func() cpuUse {
		wall := time.Since(start)
		use := cpuUse{processors: map[string]float64{}, probe: probe()}
		var parts []string
		for _, name := range []string{"kube-apiserver", "etcd", "manager", "bench", "load"} {
			pid, ok := pids[name]
			if !ok {
				continue
			}
			used := processCPU(pid) - before[name]
			use.processors[name] = used.Seconds() / wall.Seconds()
			parts = append(parts, fmt.Sprintf("%s %.1f s (%.2f processors)", name, used.Seconds(), use.processors[name]))
			if name != "load" {
				use.seconds += used.Seconds()
			}
		}
		use.text = fmt.Sprintf("%s; %.1f s in all but the load (%.2f processors); the speed probe's work took %d µs",
			strings.Join(parts, ", "), use.seconds, use.seconds/wall.Seconds(), use.probe.Microseconds())
		return use
	}
}

// loadEnv, in a process's environment, makes TestMain keep that share of one processor
// busy until it is killed or its parent ends (keepBusy), rather than run the tests.
const loadEnv = "BENCH_LOAD_PROCESSORS"

// startLoad starts the test binary as a load that uses share of one processor
// (keepBusy); stop kills it. A bench killed by its timeout takes its load with it
// (Pdeathsig; keepBusy also ends when its parent does).
func startLoad(share float64) (pid int, stop func()) {
	self, err := os.Executable()
	must(err)
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%.3f", loadEnv, share), "GOMAXPROCS=1")
	cmd.Stderr = os.Stderr // a load refusing its share says why
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	must(cmd.Start())
	return cmd.Process.Pid, func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
}

// keepBusy uses share of one processor until its parent ends: it spins while the
// processor time it has used is short of share of the time since it started, and
// sleeps while it is not. Counted in processor time, not in time spun: a load preempted
// mid-spin would otherwise use less than its share on a busy machine (0.22 processors
// of 0.36).
func keepBusy(share string) {
	f, err := strconv.ParseFloat(share, 64)
	if err != nil || f <= 0 || f > 1 {
		must(fmt.Errorf("%s=%q: want a share of one processor, in (0, 1]", loadEnv, share))
	}
	parent, start, used := os.Getppid(), time.Now(), cpuClock(unix.CLOCK_PROCESS_CPUTIME_ID)
	for os.Getppid() == parent {
		if cpuClock(unix.CLOCK_PROCESS_CPUTIME_ID)-used < time.Duration(f*float64(time.Since(start))) {
			for spin := time.Now(); time.Since(spin) < 200*time.Microsecond; {
			}
		} else {
			time.Sleep(time.Millisecond)
		}
	}
	os.Exit(0)
}

// speedProbe measures how fast the host's processors run until the function it returns
// is first called, which returns the median (and the same on later calls): at once and
// every 200 ms after, a goroutine on a thread of its own
// times a fixed piece of work (hashing, and reading memory at random, as a server does) in
// that thread's processor time, which a preemption does not lengthen. On this project's
// 2-core virtual machine, the API server's processor time for the same requests varied
// 1.3× between runs minutes apart, the other processes' with it: the host, not the work.
// Its own work, about 0.02 processors, is the bench process's, in every run alike.
func speedProbe() func() time.Duration {
	done, result := make(chan struct{}), make(chan time.Duration, 1)
	var once sync.Once
	var took time.Duration
	stop := func() time.Duration {
		once.Do(func() { close(done); took = <-result })
		return took
	}
	go func() {
		runtime.LockOSThread()
		memory := make([]uint64, 1<<20) // 8 MiB, more than a core's cache
		for i := range memory {
			memory[i] = uint64(i) * 0x9e3779b97f4a7c15
		}
		block := make([]byte, 64<<10)
		var samples []float64
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for first := true; ; first = false {
			if !first {
				select {
				case <-done:
					result <- time.Duration(median(samples))
					return
				case <-tick.C:
				}
			}
			before := cpuClock(unix.CLOCK_THREAD_CPUTIME_ID)
			sum := sha256.Sum256(block)
			x := uint64(sum[0]) | 1
			for i := 0; i < 20000; i++ {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				x += memory[x%uint64(len(memory))]
			}
			block[0] ^= sum[1] + byte(x&0xff)
			samples = append(samples, float64(cpuClock(unix.CLOCK_THREAD_CPUTIME_ID)-before))
		}
	}()
	return stop
}

// cpuClock reads a processor-time clock: the calling thread's or process's.
func cpuClock(clock int32) time.Duration {
	var ts unix.Timespec
	must(unix.ClockGettime(clock, &ts))
	return time.Duration(ts.Nano())
}
