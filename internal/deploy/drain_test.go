package deploy

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// TestDrainScript runs the preStop hook's script with bash on this machine, against a
// listener of this test and a process standing for httpd (it exits on SIGWINCH): with
// no connection it stops httpd right after the drain and the quiet time; while new
// connections keep coming (the pod is the last endpoint), each over in a moment, it
// goes on serving, and stops the quiet time after the last; kept-alive connections alone do not keep it; it never
// serves longer than its bound.
func TestDrainScript(t *testing.T) {
	g := NewWithT(t)
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = listener.Close() }()
	var keep atomic.Bool // the next connection accepted is kept open
	go func() {
		for {
			conn, err := listener.Accept()
			if err != nil {
				return
			}
			if keep.Swap(false) {
				defer func() { _ = conn.Close() }()
				continue
			}
			_ = conn.Close() // as httpd after a request with "Connection: close": the server closes first
		}
	}()
	marker := filepath.Join(t.TempDir(), "draining")
	port := int32(listener.Addr().(*net.TCPAddr).Port) //nolint:gosec // a port
	dial := func() net.Conn {
		conn, err := net.Dial("tcp", listener.Addr().String())
		g.Expect(err).NotTo(HaveOccurred())
		return conn
	}
	// stopped runs the script for a stand-in of httpd and returns when the stand-in got
	// SIGWINCH, and when the script started.
	stopped := func(drain, alone int64, meanwhile func()) (exit, start time.Time) {
		httpd := exec.Command("bash", "-c", `trap "exit 0" WINCH; while :; do sleep 0.1; done`)
		g.Expect(httpd.Start()).To(Succeed())
		exited := make(chan time.Time, 1)
		go func() { _ = httpd.Wait(); exited <- time.Now() }()
		start = time.Now()
		hook := exec.Command("bash", "-c", drainScript(drain, alone, port, strconv.Itoa(httpd.Process.Pid), marker))
		g.Expect(hook.Start()).To(Succeed())
		if meanwhile != nil {
			meanwhile()
		}
		g.Expect(hook.Wait()).To(Succeed(), "the hook waits for httpd to end, then ends")
		g.Expect(marker).To(BeAnExistingFile(), "httpd answered with Connection: close from the hook's start")
		g.Expect(os.Remove(marker)).To(Succeed())
		return <-exited, start
	}
	since := func(exit, start time.Time) time.Duration { return exit.Sub(start) }

	// Upper bounds leave room for scans of /proc/net slowed by a busy machine (go test
	// runs packages side by side); each is far below the 30 s the script may serve.
	const slack = 4 * time.Second
	quietly := since(stopped(1, 30, nil))
	g.Expect(quietly).To(BeNumerically(">=", time.Duration(1+QuietSeconds)*time.Second))
	g.Expect(quietly).To(BeNumerically("<", time.Duration(1+QuietSeconds+1)*time.Second+slack), "nobody connects: it stops")

	keep.Store(true)
	kept := dial() // a kept-alive connection, open throughout, counts for nothing
	defer func() { _ = kept.Close() }()
	var lastDial time.Time
	busyExit, _ := stopped(1, 30, func() {
		for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(300 * time.Millisecond) {
			_ = dial().Close()
			lastDial = time.Now()
		}
	})
	// The last connection is seen at the next scan, within a second, and QuietSeconds
	// scans without one follow.
	afterLast := busyExit.Sub(lastDial)
	g.Expect(afterLast).To(BeNumerically(">=", time.Duration(QuietSeconds)*time.Second), "it serves while new connections come")
	g.Expect(afterLast).To(BeNumerically("<", time.Duration(QuietSeconds+1)*time.Second+slack), "and stops once they end")

	stop := make(chan struct{})
	bounded := since(stopped(1, 3, func() {
		go func() {
			for {
				select {
				case <-stop:
					return
				case <-time.After(300 * time.Millisecond):
					_ = dial().Close()
				}
			}
		}()
	}))
	close(stop)
	g.Expect(bounded).To(BeNumerically("<", time.Duration(1+3+1)*time.Second+slack), "never longer than its bound")
}
