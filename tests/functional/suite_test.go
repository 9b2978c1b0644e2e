package functional

import (
	"context"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/keystone-stepwise/keystone-operator/internal/controlplane"
	"github.com/keystone-stepwise/keystone-operator/internal/manager"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

const (
	timeout  = 10 * time.Second
	interval = 50 * time.Millisecond
)

var (
	// testClock is the operator's clock: real time, moved forward by tests of
	// time-based steps (fernet rotation).
	testClock = &offsetClock{}
	// managerWrites counts the manager's mutating API requests, by "METHOD path".
	managerWrites sync.Map
	testEnv       *envtest.Environment
	k8sClient     client.Client
	kubeconfig    string
	cancel        context.CancelFunc
)

func TestFunctional(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Functional Suite")
}

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	SetDefaultEventuallyTimeout(timeout)
	SetDefaultEventuallyPollingInterval(interval)
	SetDefaultConsistentlyDuration(2 * time.Second)
	SetDefaultConsistentlyPollingInterval(interval)

	root, err := controlplane.RepoRoot()
	Expect(err).NotTo(HaveOccurred())
	testEnv, err = controlplane.Environment(root)
	Expect(err).NotTo(HaveOccurred())
	cfg, err := testEnv.Start()
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(testEnv.Stop()).To(Succeed()) })

	kubeconfig = filepath.Join(GinkgoT().TempDir(), "kubeconfig")
	Expect(controlplane.WriteKubeconfig(testEnv, kubeconfig)).To(Succeed())

	k8sClient, err = client.New(cfg, client.Options{Scheme: manager.Scheme})
	Expect(err).NotTo(HaveOccurred())

	mgrCfg := rest.CopyConfig(cfg)
	mgrCfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return &writeCounter{next: rt} }
	mgr, err := manager.New(mgrCfg, manager.Options{MetricsAddr: "0", ProbeAddr: "0", Clock: testClock})
	Expect(err).NotTo(HaveOccurred())
	var ctx context.Context
	ctx, cancel = context.WithCancel(context.Background())
	go func() {
		defer GinkgoRecover()
		Expect(mgr.Start(ctx)).To(Succeed())
	}()
	DeferCleanup(func() { cancel() })
})

// offsetClock is the real clock plus an offset that tests advance.
type offsetClock struct{ offset atomic.Int64 }

func (c *offsetClock) Now() time.Time                  { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *offsetClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }
func (c *offsetClock) Advance(d time.Duration)         { c.offset.Add(int64(d)) }

// writeCounter counts the mutating requests that pass through it.
type writeCounter struct{ next http.RoundTripper }

func (w *writeCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet {
		key := req.Method + " " + req.URL.Path
		n, _ := managerWrites.LoadOrStore(key, new(atomic.Int64))
		n.(*atomic.Int64).Add(1)
	}
	return w.next.RoundTrip(req)
}

// writesIn counts the manager's mutating requests whose path contains ns.
func writesIn(ns string) map[string]int64 {
	out := map[string]int64{}
	managerWrites.Range(func(k, v any) bool {
		if strings.Contains(k.(string), "/namespaces/"+ns+"/") {
			out[k.(string)] = v.(*atomic.Int64).Load()
		}
		return true
	})
	return out
}

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
