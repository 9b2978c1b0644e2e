// Package namespaced runs the operator as config/namespaced installs it: with
// WATCH_NAMESPACE and, as its only permission on the cluster's objects, the Role that
// overlay renders, bound in the watched namespaces.
package namespaced

import (
	"net/http"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/cmd/manager"
	"github.com/keystone-stepwise/keystone-operator/tests/support/controlplane"
	"github.com/keystone-stepwise/keystone-operator/tests/support/fakekeystone"
	"github.com/keystone-stepwise/keystone-operator/tests/support/testutil"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// operatorUser is who the operator runs as: it holds the overlay's Role, nothing else.
const operatorUser = "namespaced-keystone-operator"

// forbidden counts the operator's requests the API server refused.
type forbidden struct {
	count atomic.Int64
	last  atomic.Value
}

func (f *forbidden) wrap(rt http.RoundTripper) http.RoundTripper {
	return testutil.RoundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err == nil && resp.StatusCode == http.StatusForbidden {
			f.count.Add(1)
			f.last.Store(req.Method + " " + req.URL.Path)
		}
		return resp, err
	})
}

func TestNamespacedInstall(t *testing.T) {
	g := NewWithT(t)
	cfg, admin, ctx := startAPIServer(t)

	watched, full, other := "watched", "watched-full", "not-watched"
	for _, ns := range []string{watched, full, other} {
		g.Expect(admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	}
	role, identity := renderedRoles(t)
	// The cluster's identity (the kube-system namespace's UID), a ClusterRole in this overlay too.
	g.Expect(admin.Create(ctx, identity)).To(Succeed())
	g.Expect(admin.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "namespaced-keystone-operator-identity"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: identity.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: operatorUser}},
	})).To(Succeed())
	for _, ns := range []string{watched, full} {
		r := role.DeepCopy()
		r.Namespace = ns
		g.Expect(admin.Create(ctx, r)).To(Succeed())
		g.Expect(admin.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "keystone-operator"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: r.Name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: operatorUser}},
		})).To(Succeed())
	}

	var refused forbidden
	opCfg := rest.CopyConfig(cfg)
	opCfg.Impersonate = rest.ImpersonationConfig{UserName: operatorUser}
	opCfg.WrapTransport = refused.wrap
	mgr, _ := startManager(ctx, t, opCfg, manager.Options{MetricsAddr: "0", ProbeAddr: "0",
		Namespaces: manager.WatchNamespaces(" " + watched + "," + full + "," + watched)})

	ks := fakekeystone.New("admin", "secret-admin")
	defer ks.Close()
	register := func(ns string) { registerExternal(ctx, t, admin, ns, ks.URL) }
	register(watched)
	register(other)

	// A KeystoneService in a watched namespace registers.
	g.Eventually(func(g Gomega) {
		svc := &keystonev1.KeystoneService{}
		g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: watched, Name: "glance"}, svc)).To(Succeed())
		g.Expect(svc.Status.Conditions.IsTrue("Ready")).To(BeTrue(), "%v", svc.Status.Conditions)
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Expect(ks.List(fakekeystone.Services, map[string]any{"type": "image-" + watched})).To(HaveLen(1))

	// A KeystoneAPI deployed in the other watched namespace creates its objects with the Role alone.
	fullAPI := &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Namespace: full, Name: "keystone"},
		Spec: keystonev1.KeystoneAPISpec{Secret: "osp-secret", DatabaseAccount: "keystone", DatabaseInstance: "openstack",
			MemcachedInstance: "memcached", AdminUser: "admin", AdminProject: "admin", Region: "regionOne",
			ContainerImage: "keystone", PasswordSelectors: keystonev1.PasswordSelector{Admin: "AdminPassword"}}}
	g.Expect(admin.Create(ctx, fullAPI)).To(Succeed())
	g.Expect(admin.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: full, Name: "osp-secret"},
		StringData: map[string]string{"AdminPassword": "secret-admin"}})).To(Succeed())
	g.Eventually(func(g Gomega) {
		api := &keystonev1.KeystoneAPI{}
		g.Expect(admin.Get(ctx, client.ObjectKeyFromObject(fullAPI), api)).To(Succeed())
		c := api.Status.Conditions.Get("DBReady")
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Message).To(HavePrefix("MariaDBDatabase keystone"), "it created the database and its account")
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())

	// Nothing happens in a namespace it does not watch, and nothing of it is cached.
	g.Consistently(func(g Gomega) {
		svc := &keystonev1.KeystoneService{}
		g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: other, Name: "glance"}, svc)).To(Succeed())
		g.Expect(svc.Status.Conditions).To(BeEmpty())
		g.Expect(svc.Finalizers).To(BeEmpty())
	}, 3*time.Second, 200*time.Millisecond).Should(Succeed())
	g.Expect(ks.List(fakekeystone.Services, map[string]any{"type": "image-" + other})).To(BeEmpty())
	err := mgr.GetCache().List(ctx, &corev1.SecretList{}, client.InNamespace(other))
	g.Expect(err).To(HaveOccurred(), "Secrets of an unwatched namespace are not cached")
	g.Expect(mgr.GetCache().List(ctx, &corev1.SecretList{}, client.InNamespace(watched))).To(Succeed())

	// The API server refused the operator nothing.
	last, _ := refused.last.Load().(string)
	g.Expect(refused.count.Load()).To(BeZero(), "last refused: %s", last)
}

// renderedRoles are the Role `kubectl kustomize config/namespaced` renders for the
// manager, and the ClusterRole that lets it read the cluster's identity.
func renderedRoles(t *testing.T) (*rbacv1.Role, *rbacv1.ClusterRole) {
	g := NewWithT(t)
	root, err := controlplane.RepoRoot()
	g.Expect(err).NotTo(HaveOccurred())
	objs, err := controlplane.RBAC(controlplane.Kubectl(), filepath.Join(root, "config", "namespaced"))
	g.Expect(err).NotTo(HaveOccurred())
	var role *rbacv1.Role
	var identity *rbacv1.ClusterRole
	for _, obj := range objs {
		switch {
		case obj.GetKind() == "Role" && obj.GetName() == "keystone-stepwise-manager-role":
			g.Expect(obj.GetNamespace()).To(Equal("openstack"))
			r := &rbacv1.Role{}
			g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, r)).To(Succeed())
			role = &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: r.Name}, Rules: r.Rules}
		case obj.GetKind() == "ClusterRole" && obj.GetName() == "keystone-stepwise-cluster-identity-role":
			r := &rbacv1.ClusterRole{}
			g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, r)).To(Succeed())
			identity = &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: r.Name}, Rules: r.Rules}
		}
	}
	if role == nil || identity == nil {
		t.Fatal("config/namespaced renders no Role keystone-stepwise-manager-role or ClusterRole keystone-stepwise-cluster-identity-role")
	}
	return role, identity
}
