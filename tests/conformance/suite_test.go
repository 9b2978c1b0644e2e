package conformance

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	keystonev1 "github.com/openstack-k8s-operators/keystone-operator/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

const (
	timeout  = 30 * time.Second
	interval = 100 * time.Millisecond
	// adminPassword is the real Keystone's admin password.
	adminPassword = "conformance-admin-secret"
	upstreamAPI   = "github.com/openstack-k8s-operators/keystone-operator/api"
)

var (
	scheme     = runtime.NewScheme()
	k8sClient  client.Client
	kclient    kubernetes.Interface
	log        logr.Logger
	keystone   string // the real Keystone's URL
	crdSet     string
	processLog = map[string]string{}
)

func TestConformance(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Conformance Suite")
}

var _ = BeforeSuite(func() {
	log = zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true))
	logf.SetLogger(log)
	SetDefaultEventuallyTimeout(timeout)
	SetDefaultEventuallyPollingInterval(interval)
	Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	Expect(keystonev1.AddToScheme(scheme)).To(Succeed())

	crdSet = os.Getenv("CONFORMANCE_CRDS")
	if crdSet == "" {
		crdSet = "ours"
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	Expect(err).NotTo(HaveOccurred())
	work := GinkgoT().TempDir()
	crds := installableCRDs(root, work, crdSet)

	env := &envtest.Environment{CRDInstallOptions: envtest.CRDInstallOptions{Paths: []string{crds}, ErrorIfPathMissing: true}}
	cfg, err := env.Start()
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(env.Stop)
	k8sClient, err = client.New(cfg, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	kclient, err = kubernetes.NewForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())

	user, err := env.AddUser(envtest.User{Name: "operator", Groups: []string{"system:masters"}}, nil)
	Expect(err).NotTo(HaveOccurred())
	kubeconfig, err := user.KubeConfig()
	Expect(err).NotTo(HaveOccurred())
	kubeconfigPath := filepath.Join(work, "kubeconfig")
	Expect(os.WriteFile(kubeconfigPath, kubeconfig, 0o600)).To(Succeed())

	urlFile := filepath.Join(work, "keystone-url")
	start("keystone", work, filepath.Join(root, "bin", "localkeystone"), nil,
		"-admin-password", adminPassword, "-url-file", urlFile)
	Eventually(func() string { data, _ := os.ReadFile(urlFile); return string(data) }, 3*time.Minute, interval).
		ShouldNot(BeEmpty(), "the real Keystone serves (log: %s)", processLog["keystone"])
	data, err := os.ReadFile(urlFile)
	Expect(err).NotTo(HaveOccurred())
	keystone = strings.TrimSpace(string(data))

	// The operator runs with the permissions config/rbac grants, as in a cluster
	// (bin/asoperator impersonates its ServiceAccount).
	start("operator", work, filepath.Join(root, "bin", "asoperator"), []string{"KUBECONFIG=" + kubeconfigPath},
		filepath.Join(root, "bin", "manager"), "--metrics-bind-address=0", "--health-probe-bind-address=0")
	GinkgoWriter.Printf("conformance on %s CRDs: Keystone at %s\n", crdSet, keystone)
})

// installableCRDs returns a directory with the CRDs to install: this suite's and its
// dependencies' (hack/crds.sh), with keystone-operator's own files in place of this
// suite's when set is "upstream".
func installableCRDs(root, work, set string) string {
	GinkgoHelper()
	dir := filepath.Join(work, "crds")
	out, err := exec.Command(filepath.Join(root, "hack", "crds.sh"), dir).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), string(out))
	switch set {
	case "ours":
	case "upstream":
		ours, err := filepath.Glob(filepath.Join(dir, "keystone.openstack.org_*.yaml"))
		Expect(err).NotTo(HaveOccurred())
		for _, f := range ours {
			Expect(os.Remove(f)).To(Succeed())
		}
		out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", upstreamAPI).Output()
		Expect(err).NotTo(HaveOccurred(), "locating %s", upstreamAPI)
		upstream, err := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "bases", "keystone.openstack.org_*.yaml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(upstream).To(HaveLen(4), "keystone-operator's four CRDs")
		for _, f := range upstream {
			data, err := os.ReadFile(f)
			Expect(err).NotTo(HaveOccurred())
			Expect(os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o600)).To(Succeed()) //nolint:gosec // CRD files of the pinned module
		}
	default:
		Fail(fmt.Sprintf("CONFORMANCE_CRDS=%s: want ours or upstream", set))
	}
	return dir
}

// start runs a program for the suite, logging to a file, and stops it after the suite.
func start(name, work, path string, env []string, args ...string) {
	GinkgoHelper()
	logPath := filepath.Join(work, name+".log")
	logFile, err := os.Create(logPath)
	Expect(err).NotTo(HaveOccurred())
	processLog[name] = logPath
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	Expect(cmd.Start()).To(Succeed(), "starting %s (make conformance builds it)", path)
	DeferCleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		_ = logFile.Close()
	})
}

var _ = ReportAfterEach(func(report SpecReport) {
	if report.Failed() {
		for name, path := range processLog {
			data, _ := os.ReadFile(path)
			lines := strings.Split(string(data), "\n")
			if len(lines) > 60 {
				lines = lines[len(lines)-60:]
			}
			GinkgoWriter.Printf("--- the end of %s's log (%s):\n%s\n", name, path, strings.Join(lines, "\n"))
		}
	}
})

// newNamespace creates a namespace for one spec.
func newNamespace() string {
	GinkgoHelper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "c-" + string(uuid.NewUUID())[:8]}}
	Expect(k8sClient.Create(context.Background(), ns)).To(Succeed())
	return ns.Name
}
