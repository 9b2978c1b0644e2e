package functional

import (
	"context"
	"io"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/keystone-stepwise/keystone-operator/cmd/manager"
	"github.com/keystone-stepwise/keystone-operator/tests/support/controlplane"
	"github.com/keystone-stepwise/keystone-operator/tests/support/testutil"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

const (
	timeout  = 10 * time.Second
	interval = 50 * time.Millisecond
	// realTimeout bounds a wait on the real Keystone.
	realTimeout = time.Minute
)

var (
	// testClock is the operator's clock: real time, moved forward by tests of
	// time-based steps (fernet rotation).
	testClock = &testutil.OffsetClock{}
	// managerWrites counts the manager's mutating API requests, by "METHOD path".
	managerWrites testutil.Writes
	testEnv       *envtest.Environment
	k8sClient     client.Client
	kubeconfig    string
	cancel        context.CancelFunc
	// operatorLog holds what the operator logged during the run.
	operatorLog testutil.SyncBuffer
)

func TestFunctional(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Functional Suite")
}

var _ = BeforeSuite(func() {
	// Everything the operator logs, at debug level, is also kept for the leak search.
	logf.SetLogger(zap.New(zap.WriteTo(io.MultiWriter(GinkgoWriter, &operatorLog)), zap.UseDevMode(true)))
	SetDefaultEventuallyTimeout(timeout)
	SetDefaultEventuallyPollingInterval(interval)
	SetDefaultConsistentlyDuration(2 * time.Second)
	SetDefaultConsistentlyPollingInterval(interval)

	root, err := controlplane.RepoRoot()
	Expect(err).NotTo(HaveOccurred())
	// The data plane's NodeSet kind too: application credentials wait for NodeSets.
	testEnv, err = controlplane.Environment(root, filepath.Join("testdata", "crds"))
	controlplane.Unavailable(GinkgoT(), err)
	Expect(err).NotTo(HaveOccurred())
	cfg, err := testEnv.Start()
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(testEnv.Stop()).To(Succeed()) })

	kubeconfig = filepath.Join(GinkgoT().TempDir(), "kubeconfig")
	Expect(controlplane.WriteKubeconfig(testEnv, kubeconfig)).To(Succeed())

	k8sClient, err = client.New(cfg, client.Options{Scheme: manager.Scheme})
	Expect(err).NotTo(HaveOccurred())

	// The operator runs with the permissions config/rbac grants, as in a cluster: a
	// rule it lacks fails the specs that need it.
	mgrCfg, err := controlplane.AsOperator(context.Background(), cfg, root)
	Expect(err).NotTo(HaveOccurred())
	mgrCfg.WrapTransport = managerWrites.Wrap
	// The regions' watch (an extra read of each Keystone, and a round of what it first
	// sees) is tested by tests/multiregion and its unit test; an hourly look keeps it out
	// of the request counts these specs assert.
	mgr, err := manager.New(mgrCfg, manager.Options{MetricsAddr: "0", ProbeAddr: "0", Clock: testClock, RegionRecheck: time.Hour})
	Expect(err).NotTo(HaveOccurred())
	var ctx context.Context
	ctx, cancel = context.WithCancel(context.Background())
	go func() {
		defer GinkgoRecover()
		Expect(mgr.Start(ctx)).To(Succeed())
	}()
	DeferCleanup(func() { cancel() })
})

var _ = AfterSuite(func() {
	stopRealStack()
	checkMonitoringAfterSuite()
})

// writesIn counts the manager's mutating requests in namespace ns.
func writesIn(ns string) map[string]int64 { return managerWrites.In(ns) }

// newNamespace creates a namespace for one spec and deletes it afterwards.
func newNamespace() string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "t-" + string(uuid.NewUUID())[:8]}}
	Expect(k8sClient.Create(context.Background(), ns)).To(Succeed())
	DeferCleanup(func() { Expect(k8sClient.Delete(context.Background(), ns)).To(Succeed()) })
	return ns.Name
}

// kubectl runs the kubectl built for envtest against the test control plane.
func kubectl(args ...string) string {
	path := filepath.Join(testEnv.BinaryAssetsDirectory, "kubectl")
	if testEnv.BinaryAssetsDirectory == "" {
		path = "kubectl"
	}
	out, err := exec.Command(path, append([]string{"--kubeconfig", kubeconfig}, args...)...).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), string(out))
	return string(out)
}
