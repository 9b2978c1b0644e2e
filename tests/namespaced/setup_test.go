package namespaced

import (
	"context"
	"io"
	"testing"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/cmd/manager"
	"github.com/keystone-stepwise/keystone-operator/tests/support/controlplane"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// startAPIServer starts envtest's API server with every CRD the operator needs, stopped
// when t ends, and returns its admin's configuration, a client of it and a context
// bounded to two minutes.
func startAPIServer(t *testing.T) (*rest.Config, client.Client, context.Context) {
	cfg, admin, ctx, _ := startAuditedAPIServer(t, false)
	return cfg, admin, ctx
}

// startAuditedAPIServer is startAPIServer whose API server, with audit, writes every
// request and its answer's code to the audit log whose path it returns.
func startAuditedAPIServer(t *testing.T, audit bool) (*rest.Config, client.Client, context.Context, string) {
	t.Helper()
	g := NewWithT(t)
	logf.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	root, err := controlplane.RepoRoot()
	g.Expect(err).NotTo(HaveOccurred())
	env, err := controlplane.Environment(root)
	controlplane.Unavailable(t, err)
	g.Expect(err).NotTo(HaveOccurred())
	auditLog := ""
	if audit {
		auditLog, err = controlplane.Audit(env, t.TempDir())
		g.Expect(err).NotTo(HaveOccurred())
	}
	cfg, err := env.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { g.Expect(env.Stop()).To(Succeed()) })
	admin, err := client.New(cfg, client.Options{Scheme: manager.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return cfg, admin, ctx, auditLog
}

// startManager runs the manager on cfg with opts until stop is called (or t ends) and
// returns it; it fails t when it does not stop within 30 s or stops with an error.
func startManager(ctx context.Context, t *testing.T, cfg *rest.Config, opts manager.Options) (mgr ctrl.Manager, stop func()) {
	t.Helper()
	g := NewWithT(t)
	// Several managers run in this process.
	opts.Isolated = true
	mgr, err := manager.New(cfg, opts)
	g.Expect(err).NotTo(HaveOccurred())
	mgrCtx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mgrCtx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			g.Expect(err).NotTo(HaveOccurred())
		case <-time.After(30 * time.Second):
			t.Error("the manager did not stop within 30 s of being told to")
		}
	}
	t.Cleanup(stop)
	return mgr, stop
}

// registerExternal creates in ns an external KeystoneAPI at the Keystone of url, its
// osp-secret, and a KeystoneService glance whose type, name and user end in ns.
func registerExternal(ctx context.Context, t *testing.T, admin client.Client, ns, url string) {
	t.Helper()
	g := NewWithT(t)
	api := &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "keystone"},
		Spec: keystonev1.KeystoneAPISpec{ExternalKeystoneAPI: true, ContainerImage: "keystone", Secret: "osp-secret", DatabaseAccount: "keystone",
			MemcachedInstance: "memcached", AdminUser: "admin", AdminProject: "admin",
			Region: "regionOne", PasswordSelectors: keystonev1.PasswordSelector{Admin: "AdminPassword"}}}
	api.Spec.Override.Service = &keystonev1.ServiceOverrides{
		Public: &keystonev1.EndpointOverride{EndpointURL: ptr.To(url)}, Internal: &keystonev1.EndpointOverride{EndpointURL: ptr.To(url)},
	}
	g.Expect(admin.Create(ctx, api)).To(Succeed())
	g.Expect(admin.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "osp-secret"},
		StringData: map[string]string{"AdminPassword": "secret-admin", "GlancePassword": "glance-" + ns}})).To(Succeed())
	g.Expect(admin.Create(ctx, &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "glance"},
		Spec: keystonev1.KeystoneServiceSpec{ServiceType: "image-" + ns, ServiceName: "glance-" + ns, ServiceUser: "glance-" + ns,
			Secret: "osp-secret", PasswordSelector: "GlancePassword"}})).To(Succeed())
}
