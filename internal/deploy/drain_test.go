package deploy

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// TestDrainScript runs the preStop hook's script with bash on this machine, against a
// listener of this test: with no connection it ends right after the drain and the quiet
// time; while new connections keep coming (the pod is the last endpoint), each over in a
// moment, it goes on, and ends the quiet time after the last; kept-alive connections
// alone do not keep it; it never goes on longer than its bound. It ends with success
// (a failed hook is a Warning on the pod) and signals nothing: the kubelet's SIGTERM,
// after it, stops httpd (TestServeCommand).
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
	// stopped runs the script and returns when it ended, and when it started.
	stopped := func(drain, alone int64, meanwhile func()) (exit, start time.Time) {
		start = time.Now()
		hook := exec.Command("bash", "-c", drainScript(drain, alone, port, marker))
		g.Expect(hook.Start()).To(Succeed())
		if meanwhile != nil {
			meanwhile()
		}
		g.Expect(hook.Wait()).To(Succeed(), "the hook ends with success")
		exit = time.Now()
		g.Expect(marker).To(BeAnExistingFile(), "httpd answered with Connection: close from the hook's start")
		g.Expect(os.Remove(marker)).To(Succeed())
		return exit, start
	}
	since := func(exit, start time.Time) time.Duration { return exit.Sub(start) }
	// visit is a request on a connection of its own: the client reads until the server
	// closes, as after httpd's answer with "Connection: close", so the server's end, not
	// the client's, stays in TIME_WAIT, as in the pod. A client closing first would leave
	// the server's end nothing to wait in, gone before the script's next scan when this
	// test's accepting goroutine is slow to close it (go test runs packages side by side).
	visit := func() {
		conn := dial()
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, _ = io.Copy(io.Discard, conn)
		_ = conn.Close()
	}

	g.Expect(drainScript(1, 30, port, marker)).NotTo(ContainSubstring("kill"), "the hook signals nothing")
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
			// Taken before the dial: the script may see the connection before this
			// process, on a busy machine, gets to read the clock after it.
			lastDial = time.Now()
			visit()
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
					visit()
				}
			}
		}()
	}))
	close(stop)
	g.Expect(bounded).To(BeNumerically("<", time.Duration(1+3+1)*time.Second+slack), "never longer than its bound")
}

// TestServeCommand runs the API container's shell command with bash on this machine and
// a process standing for httpd: a SIGTERM to the shell, as the kubelet's after the hook
// (or SIGQUIT, a stop signal an image may name), reaches httpd as SIGWINCH (its graceful
// stop), and the shell waits for httpd to finish what it serves before it exits, with
// httpd's status; a SIGTERM that comes before httpd started ends the shell with success,
// and httpd never starts; an httpd that ends on its own ends the shell with its status.
func TestServeCommand(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	signal, started, step := filepath.Join(dir, "signal"), filepath.Join(dir, "started"), filepath.Join(dir, "step")
	// The stand-in writes "winch" when it gets SIGWINCH, finishes for a second and exits 0;
	// SIGTERM would end it with 143, and nothing at all makes it exit 3 after 3 s. It
	// says it started once its trap is set.
	httpd := fmt.Sprintf(`bash -c 'trap "echo winch > %[1]s; sleep 1; exit 0" WINCH; touch %[2]s; for i in $(seq 30); do sleep 0.1; done; exit 3'`,
		signal, started)
	serve := func(steps ...string) *exec.Cmd {
		cmd := exec.Command("bash", "-c", strings.Replace(ServeCommand(httpd, steps...), LinkKeys, "", 1))
		g.Expect(cmd.Start()).To(Succeed())
		return cmd
	}
	exists := func(path string) func() bool {
		return func() bool { _, err := os.Stat(path); return err == nil }
	}

	// The kubelet's SIGTERM, or another stop signal an image may name.
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGQUIT} {
		shell := serve()
		g.Eventually(exists(started), 2*time.Second, 10*time.Millisecond).Should(BeTrue(), "httpd runs, its trap set")
		stop := time.Now()
		g.Expect(shell.Process.Signal(sig)).To(Succeed())
		g.Expect(shell.Wait()).To(Succeed(), "%v: httpd's graceful stop ends with 0 (its own end, 3), and so does the shell", sig)
		g.Expect(time.Since(stop)).To(BeNumerically(">=", time.Second), "%v: the shell waits for httpd to finish", sig)
		g.Expect(os.ReadFile(signal)).To(Equal([]byte("winch\n")), "%v: httpd got SIGWINCH", sig)
		g.Expect(os.Remove(signal)).To(Succeed())
		g.Expect(os.Remove(started)).To(Succeed())
	}

	// A SIGTERM while a step still runs (httpd not started yet).
	shell := serve("touch " + step + " && sleep 2")
	g.Eventually(exists(step), 2*time.Second, 10*time.Millisecond).Should(BeTrue())
	g.Expect(shell.Process.Signal(syscall.SIGTERM)).To(Succeed())
	g.Expect(shell.Wait()).To(Succeed(), "the early SIGTERM ends the shell with success")
	g.Expect(started).NotTo(BeAnExistingFile(), "httpd never started")

	shell = serve()
	err := shell.Wait()
	var exit *exec.ExitError
	g.Expect(errors.As(err, &exit)).To(BeTrue(), "httpd's own end ends the shell: %v", err)
	g.Expect(exit.ExitCode()).To(Equal(3), "with httpd's status")
	g.Expect(started).To(BeAnExistingFile())
	g.Expect(signal).NotTo(BeAnExistingFile())
}
