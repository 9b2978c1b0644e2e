package procstat

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

func TestReadsThisProcess(t *testing.T) {
	for start := time.Now(); time.Since(start) < 50*time.Millisecond; {
		_ = time.Now() // spend processor time to be charged for
	}
	st, err := Read(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if st.PID != os.Getpid() || st.PPID != os.Getppid() || st.CPU <= 0 {
		t.Fatalf("read %+v for pid %d, parent %d", st, os.Getpid(), os.Getppid())
	}
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range all {
		found = found || s.PID == os.Getpid()
	}
	if !found {
		t.Fatalf("All() lacks this process among %d", len(all))
	}
	time.Sleep(30 * time.Millisecond) // three clock ticks
	child := exec.Command("sleep", "10")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = child.Process.Kill(); _ = child.Wait() }()
	later, err := Read(child.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if st.Start == 0 || later.Start <= st.Start || later.PPID != os.Getpid() {
		t.Fatalf("a child started after this process (%d) read as started at %d, by %d", st.Start, later.Start, later.PPID)
	}
}

func TestNode(t *testing.T) {
	// user nice system idle iowait irq softirq steal guest guest_nice
	earlier, err := parseNode("cpu  100 0 50 800 50 0 0 0 30 0")
	if err != nil {
		t.Fatal(err)
	}
	later, err := parseNode("cpu  200 10 90 1100 60 5 5 0 90 0")
	if err != nil {
		t.Fatal(err)
	}
	if earlier != (Node{Busy: 150, Total: 1000}) || later != (Node{Busy: 310, Total: 1470}) {
		t.Fatalf("read %+v and %+v", earlier, later)
	}
	// 160 ticks busy of 470 on 2 processors.
	if got := later.ProcessorsSince(earlier, 2); got < 0.680 || got > 0.681 {
		t.Fatalf("ProcessorsSince: %v, want 0.68", got)
	}
	if _, err := parseNode("intr 1 2 3"); err == nil {
		t.Fatal("a line that is not the processors' was read")
	}
	if _, err := ReadNode(); err != nil {
		t.Fatal(err)
	}
}
