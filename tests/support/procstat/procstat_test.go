package procstat

import (
	"os"
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
}
