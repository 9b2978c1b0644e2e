package localkeystone

import (
	"context"
	"errors"
	"fmt"
	"github.com/keystone-stepwise/keystone-operator/tests/support/controlplane"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/keystone-stepwise/keystone-operator/tests/support/procstat"
)

// Process is a server started by this package.
type Process struct {
	cmd  *exec.Cmd
	log  string
	done chan error
}

// start runs name with args, its output in logPath.
func start(logPath, name string, args []string, env []string) (*Process, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("creating log %s: %w", logPath, err)
	}
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = append(os.Environ(), env...)
	// Pdeathsig: a test binary killed by its timeout takes its servers with it
	// instead of leaving them on the machine.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &Process{cmd: cmd, log: logPath, done: make(chan error, 1)}
	go func() {
		p.done <- cmd.Wait()
		_ = logFile.Close()
	}()
	return p, nil
}

// Stop ends the process group and waits for it.
func (p *Process) Stop() {
	if p == nil || p.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	var err error
	select {
	case err = <-p.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		err = <-p.done
	}
	// Put back for a second Stop (a test stops Keystone, then its stack): it returns at once.
	p.done <- err
}

// tail returns the end of the process's log, for error messages.
func (p *Process) tail() string {
	data, err := os.ReadFile(p.log)
	if err != nil {
		return ""
	}
	s := strings.TrimSpace(string(data))
	if len(s) > 2000 {
		s = s[len(s)-2000:]
	}
	return s
}

// waitFor polls ready until it succeeds, the process exits, or timeout passes.
func (p *Process) waitFor(what string, timeout time.Duration, ready func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := ready()
		if err == nil {
			return nil
		}
		select {
		case exitErr := <-p.done:
			p.done <- exitErr
			return fmt.Errorf("%s exited (%w) before it was ready:\n%s", what, exitErr, p.tail())
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %s: %w\n%s", what, timeout, err, p.tail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// FreePort returns a TCP port free on 127.0.0.1 at the time of the call.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func dial(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	return c.Close()
}

// run runs a command to completion and returns its combined output in the error.
func run(ctx context.Context, env []string, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return nil
}

// Missing lists the Debian programs this package needs that are not installed.
func Missing() []string {
	var missing []string
	for _, p := range []string{"/usr/sbin/mariadbd", "/usr/bin/mariadb-install-db", "/usr/bin/mariadb", "/usr/bin/memcached",
		"/usr/bin/keystone-manage", "/usr/bin/uwsgi", "/usr/bin/keystone-wsgi-public"} {
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			missing = append(missing, p)
		}
	}
	return missing
}

// NotInstalled is a *controlplane.MissingError naming the Debian programs Missing
// lists (controlplane.Unavailable skips or fails on it); nil when all are there.
func NotInstalled() error {
	if missing := Missing(); len(missing) > 0 {
		return &controlplane.MissingError{What: fmt.Sprintf("Debian's keystone, uwsgi, mariadb-server and memcached (%s)",
			strings.Join(missing, ", ")), Run: "make debian-deps"}
	}
	return nil
}

// CPU is the processor time used so far by the live processes of the process's group
// (uwsgi's master and workers), from /proc: what a benchmark charges to the server.
func (p *Process) CPU() (time.Duration, error) {
	if p == nil || p.cmd.Process == nil {
		return 0, errors.New("not started")
	}
	all, err := procstat.All()
	if err != nil {
		return 0, err
	}
	var used time.Duration
	for _, st := range all {
		if st.PGRP == p.cmd.Process.Pid {
			used += st.CPU
		}
	}
	return used, nil
}
