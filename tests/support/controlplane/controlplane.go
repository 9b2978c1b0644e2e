package controlplane

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

const modulePath = "github.com/keystone-stepwise/keystone-operator"

// dependencyCRDs are the CRDs of the kinds the operator uses from other operators (the
// same list as hack/crds.sh, for kubectl and kuttl),
// as their Go modules ship them: module path, then file under it.
var dependencyCRDs = [][2]string{
	{"github.com/openstack-k8s-operators/mariadb-operator/api", "bases/mariadb.openstack.org_mariadbdatabases.yaml"},
	{"github.com/openstack-k8s-operators/mariadb-operator/api", "bases/mariadb.openstack.org_mariadbaccounts.yaml"},
	{"github.com/openstack-k8s-operators/infra-operator/apis", "bases/memcached.openstack.org_memcacheds.yaml"},
	{"github.com/openstack-k8s-operators/infra-operator/apis", "bases/rabbitmq.openstack.org_transporturls.yaml"},
	{"github.com/openstack-k8s-operators/infra-operator/apis", "bases/topology.openstack.org_topologies.yaml"},
}

// RepoRoot finds the root of this repository from the working directory.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding the working directory: %w", err)
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(data), "module "+modulePath+"\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the keystone-operator repository")
		}
		dir = parent
	}
}

// CRDPaths lists the CRD files to install: this repository's and the dependencies'.
func CRDPaths(root string) ([]string, error) {
	paths := []string{filepath.Join(root, "config", "crd", "bases")}
	dirs := map[string]string{}
	for _, dep := range dependencyCRDs {
		dir, ok := dirs[dep[0]]
		if !ok {
			var err error
			if dir, err = ModuleDir(root, dep[0]); err != nil {
				return nil, err
			}
			dirs[dep[0]] = dir
		}
		paths = append(paths, filepath.Join(dir, dep[1]))
	}
	return paths, nil
}

// Environment returns an envtest environment that installs every CRD the operator
// needs, and those of extra (files or directories). Its binaries are KUBEBUILDER_ASSETS
// (make sets it), else the newest that `make envtest` built under bin/; without either,
// a *MissingError (Unavailable).
func Environment(root string, extra ...string) (*envtest.Environment, error) {
	paths, err := CRDPaths(root)
	if err != nil {
		return nil, err
	}
	paths = append(paths, extra...)
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		built, _ := filepath.Glob(filepath.Join(root, "bin", "k8s-*-etcd-*", "kube-apiserver"))
		if len(built) == 0 {
			return nil, &MissingError{What: "etcd and kube-apiserver (KUBEBUILDER_ASSETS is not set, and bin/ holds none)", Run: "make envtest"}
		}
		sort.Strings(built)
		assets = filepath.Dir(built[len(built)-1])
	}
	return &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDInstallOptions:     envtest.CRDInstallOptions{Paths: paths, ErrorIfPathMissing: true},
	}, nil
}

// MissingError says a test lacks something the Makefile installs, and what installs it.
type MissingError struct{ What, Run string }

func (e *MissingError) Error() string {
	return fmt.Sprintf("%s not found: run `%s`, or make test", e.What, e.Run)
}

// Required tells whether a test that lacks what it needs fails rather than skips: run
// through make (which sets KUBEBUILDER_ASSETS, having installed everything), yes; a
// plain `go test ./...`, no.
func Required() bool { return os.Getenv("KUBEBUILDER_ASSETS") != "" }

// Ender is what Unavailable needs of a test: testing.TB, or Ginkgo's GinkgoT().
type Ender interface {
	Helper()
	Fatal(args ...any)
	Skip(args ...any)
}

// Unavailable ends t when err says something it needs is missing (a *MissingError):
// failed under make, skipped with the message under a plain go test. It returns
// whether it did; any other error is left to the caller.
func Unavailable(t Ender, err error) bool {
	t.Helper()
	var missing *MissingError
	if !errors.As(err, &missing) {
		return false
	}
	if Required() {
		t.Fatal(missing.Error())
	}
	t.Skip(missing.Error())
	return true
}

// InstallCRDs installs every CRD the operator needs into the cluster of cfg.
func InstallCRDs(cfg *rest.Config, root string) error {
	paths, err := CRDPaths(root)
	if err != nil {
		return err
	}
	if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{Paths: paths, ErrorIfPathMissing: true}); err != nil {
		return fmt.Errorf("installing CRDs: %w", err)
	}
	return nil
}

// WriteKubeconfig adds a cluster-admin user to env and writes its kubeconfig to path.
func WriteKubeconfig(env *envtest.Environment, path string) error {
	user, err := env.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return fmt.Errorf("adding an admin user: %w", err)
	}
	data, err := user.KubeConfig()
	if err != nil {
		return fmt.Errorf("building kubeconfig: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(path), err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("writing kubeconfig: %w", err)
	}
	return nil
}

// Started is a control plane started for one test (Start).
type Started struct {
	Env    *envtest.Environment
	Config *rest.Config
	// Kubeconfig is a cluster-admin kubeconfig file (WriteKubeconfig); Kubectl is the
	// kubectl built beside the control plane's binaries.
	Kubeconfig, Kubectl string
}

// Start starts, for t, an API server with every CRD the operator needs and those of
// extra (Environment), stopped when t ends, with a cluster-admin kubeconfig in t's
// temporary directory. What it needs and lacks ends t as Unavailable says.
func Start(t testing.TB, root string, extra ...string) *Started {
	t.Helper()
	env, err := Environment(root, extra...)
	if err != nil {
		Unavailable(t, err)
		t.Fatal(err)
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting the control plane: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := WriteKubeconfig(env, kubeconfig); err != nil {
		t.Fatal(err)
	}
	return &Started{Env: env, Config: cfg, Kubeconfig: kubeconfig, Kubectl: filepath.Join(env.BinaryAssetsDirectory, "kubectl")}
}

// Kustomize is the kustomize make builds: KUSTOMIZE, which make test sets, else the
// newest in root's bin/. Without one, t fails under make and is skipped under a plain go
// test (Unavailable).
func Kustomize(t Ender, root string) string {
	t.Helper()
	if k := os.Getenv("KUSTOMIZE"); k != "" {
		return k
	}
	built, _ := filepath.Glob(filepath.Join(root, "bin", "kustomize-*"))
	if len(built) == 0 {
		Unavailable(t, &MissingError{What: "kustomize", Run: "make " + filepath.Join("bin", "kustomize-<version>")})
	}
	return built[len(built)-1]
}

// ModuleDir returns where the module path, at the version the module in dir requires,
// is in the module cache, downloading it first (go mod download -json): go list -m names
// no directory for a module the cache lacks yet, as on a fresh machine.
func ModuleDir(dir, path string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", path)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if exit := (*exec.ExitError)(nil); errors.As(err, &exit) {
			stderr = exit.Stderr
		}
		return "", fmt.Errorf("go mod download %s: %w: %s%s", path, err, out, stderr)
	}
	var module struct{ Dir string }
	if err := json.Unmarshal(out, &module); err != nil {
		return "", fmt.Errorf("go mod download %s: %w: %s", path, err, out)
	}
	if module.Dir == "" {
		return "", fmt.Errorf("go mod download %s named no directory: %s", path, out)
	}
	return module.Dir, nil
}
