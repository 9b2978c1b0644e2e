// Command asoperator runs a command as the operator runs in a cluster: it installs
// config/default's ServiceAccount, ClusterRoles, Roles and bindings into the cluster of
// KUBECONFIG (whose user may impersonate), writes a kubeconfig that impersonates that
// ServiceAccount, and replaces itself with the command, KUBECONFIG pointing at it.
// The kuttl and conformance suites start the manager through it, so that a permission
// config/rbac lacks fails their scenarios as it would fail in a cluster.
//
//	asoperator COMMAND [ARG...]
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/keystone-stepwise/keystone-operator/tests/support/controlplane"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "asoperator:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: asoperator COMMAND [ARG...]")
	}
	admin := os.Getenv("KUBECONFIG")
	if admin == "" {
		return fmt.Errorf("KUBECONFIG is not set: it names the cluster and a user that may impersonate")
	}
	root, err := controlplane.RepoRoot()
	if err != nil {
		return err
	}
	// Beside the admin's, so that it goes away with the run that made it.
	path := filepath.Join(filepath.Dir(admin), "kubeconfig-operator")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := controlplane.WriteOperatorKubeconfig(ctx, admin, path, root); err != nil {
		return err
	}
	command, err := exec.LookPath(args[0])
	if err != nil {
		return err
	}
	env := append(os.Environ(), "KUBECONFIG="+path)
	//nolint:gosec // the command is the caller's, as with env(1)
	return syscall.Exec(command, args, env)
}
