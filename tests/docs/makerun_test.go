package docs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// makeRunPlan is what `make -n run ARGS` would run with HOME home and KUBECONFIG
// kubeconfig (unset when empty).
func makeRunPlan(t *testing.T, root, home, kubeconfig string, args []string) string {
	t.Helper()
	cmd := exec.Command("make", append([]string{"-n", "run"}, args...)...)
	cmd.Dir = root
	cmd.Env = append(withoutKubeconfig(os.Environ()), "HOME="+home, "GOPATH="+goPath(), "GOCACHE="+goCache())
	if kubeconfig != "" {
		cmd.Env = append(cmd.Env, "KUBECONFIG="+kubeconfig)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n run %v (HOME %s, KUBECONFIG %q): %v\n%s", args, home, kubeconfig, err, out)
	}
	return string(out)
}

// TestMakeRunTarget: `make run` runs against the kubeconfig kubectl would use (KUBECONFIG,
// else ~/.kube/config), building nothing of a local cluster then, as the README says; with
// none, against the local cluster it builds; RUN_LOCAL on the command line forces that
// local cluster. The scripts that start a local cluster name it (-local=cluster or
// control-plane), whatever kubeconfig there is. Read from `make -n run`, which runs nothing.
func TestMakeRunTarget(t *testing.T) {
	root := repoRoot(t)
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	home := t.TempDir()
	withConfig := t.TempDir()
	if err := os.MkdirAll(filepath.Join(withConfig, ".kube"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(withConfig, ".kube", "config"), []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		what, home, kubeconfig string
		args                   []string
		local                  string
		// builds: what is built for the local cluster (envtest's control plane, the node's
		// binaries, the test actor), yes or no.
		builds bool
	}{
		{"no kubeconfig anywhere: the local cluster", home, "", nil, "-local=cluster", true},
		{"KUBECONFIG: its current context", home, "/tmp/some-kubeconfig", nil, "-local=kubeconfig", false},
		{"~/.kube/config: its current context", withConfig, "", nil, "-local=kubeconfig", false},
		{"RUN_LOCAL given: that local cluster", withConfig, "", []string{"RUN_LOCAL=control-plane"}, "-local=control-plane", true},
	} {
		plan := makeRunPlan(t, root, tc.home, tc.kubeconfig, tc.args)
		if !strings.Contains(plan, "/devrun "+tc.local) {
			t.Errorf("%s: devrun is not run with %s:\n%s", tc.what, tc.local, plan)
		}
		local := strings.Contains(plan, "KUBEBUILDER_ASSETS=")
		if local != tc.builds {
			t.Errorf("%s: the local cluster's binaries used: %t, want %t:\n%s", tc.what, local, tc.builds, plan)
		}
	}
	for _, script := range []string{"hack/e2e.sh", "hack/bench-pods.sh", "hack/demo.sh"} {
		data, err := os.ReadFile(filepath.Join(root, script))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			command := !strings.HasPrefix(strings.TrimSpace(line), "#")
			if command && strings.Contains(line, "bin/devrun ") && !strings.Contains(line, "-local=cluster") &&
				!strings.Contains(line, "-local=control-plane") {
				t.Errorf("%s runs devrun without naming its local cluster (it would use a kubeconfig it finds): %s", script, line)
			}
		}
	}
}

// withoutKubeconfig is env without KUBECONFIG.
func withoutKubeconfig(env []string) []string {
	var out []string
	for _, e := range env {
		if !strings.HasPrefix(e, "KUBECONFIG=") {
			out = append(out, e)
		}
	}
	return out
}

// goPath and goCache keep Go's own paths when HOME changes.
func goPath() string  { return goEnv("GOPATH") }
func goCache() string { return goEnv("GOCACHE") }

func goEnv(name string) string {
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
