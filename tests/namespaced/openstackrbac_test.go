package namespaced

import (
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/cmd/manager"
	"github.com/keystone-stepwise/keystone-operator/internal/handback"
	"github.com/keystone-stepwise/keystone-operator/tests/support/fakekeystone"
	"github.com/keystone-stepwise/keystone-operator/tests/support/openstackrbac"
	. "github.com/onsi/gomega"
	topologyv1 "github.com/openstack-k8s-operators/infra-operator/apis/topology/v1beta1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// openstackOperatorUser is the ServiceAccount openstack-operator runs keystone-operator
// (and this image in its place) as.
const openstackOperatorUser = "system:serviceaccount:openstack-operators:keystone-operator-controller-manager"

// TestOpenStackOperatorRBAC runs the manager with nothing but the ClusterRole
// openstack-operator gives keystone-operator (openstackrbac): a deployed KeystoneAPI
// with a topologyRef holds its Topology (update, where patch is not granted), an
// external one registers a service, the start-up check names the two optional
// permissions it lacks, and the API server refuses nothing else.
func TestOpenStackOperatorRBAC(t *testing.T) {
	g := NewWithT(t)
	cfg, admin, ctx := startAPIServer(t)

	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "keystone-operator-manager-role"}, Rules: openstackrbac.Rules()}
	g.Expect(admin.Create(ctx, role)).To(Succeed())
	g.Expect(admin.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "keystone-operator-manager-rolebinding"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: openstackOperatorUser}},
	})).To(Succeed())
	deployed, external := "openstack", "external"
	for _, ns := range []string{deployed, external} {
		g.Expect(admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	}

	var refused forbidden
	var refusals []string
	opCfg := rest.CopyConfig(cfg)
	opCfg.Impersonate = rest.ImpersonationConfig{UserName: openstackOperatorUser,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:openstack-operators", "system:authenticated"}}
	opCfg.WrapTransport = refused.wrap
	_, stop := startManager(ctx, t, opCfg, manager.Options{MetricsAddr: "0", ProbeAddr: "0"})

	// The start-up check: what is missing is optional, and said so.
	var said []string
	log := funcr.New(func(_, args string) { said = append(said, args) }, funcr.Options{})
	op, err := client.New(opCfg, client.Options{Scheme: manager.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	lacking, err := manager.CheckPermissions(ctx, op, deployed, log)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(lacking).To(Equal([]string{"get /namespaces", "patch topology.openstack.org/topologies"}))
	g.Expect(said).To(HaveLen(2))
	g.Expect(said[0]).To(ContainSubstring(`"msg"="optional permission missing" "permission"="get /namespaces"`))

	// A deployed KeystoneAPI with a topologyRef holds its Topology.
	g.Expect(admin.Create(ctx, &topologyv1.Topology{ObjectMeta: metav1.ObjectMeta{Namespace: deployed, Name: "default"},
		Spec: topologyv1.TopologySpec{TopologySpreadConstraints: &[]corev1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.ScheduleAnyway}}}})).To(Succeed())
	g.Expect(admin.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: deployed, Name: "osp-secret"},
		StringData: map[string]string{"AdminPassword": "secret-admin"}})).To(Succeed())
	api := &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Namespace: deployed, Name: "keystone"},
		Spec: keystonev1.KeystoneAPISpec{Secret: "osp-secret", DatabaseAccount: "keystone", DatabaseInstance: "openstack",
			MemcachedInstance: "memcached", AdminUser: "admin", AdminProject: "admin", Region: "regionOne",
			ContainerImage: "keystone", PasswordSelectors: keystonev1.PasswordSelector{Admin: "AdminPassword"},
			TopologyRef: &keystonev1.TopoRef{Name: "default"}}}
	g.Expect(admin.Create(ctx, api)).To(Succeed())
	g.Eventually(func(g Gomega) {
		got := &keystonev1.KeystoneAPI{}
		g.Expect(admin.Get(ctx, client.ObjectKeyFromObject(api), got)).To(Succeed())
		g.Expect(got.Status.Conditions.IsTrue(keystonev1.KeystoneAPITopologyReady)).To(BeTrue(), "%v", got.Status.Conditions)
		topology := &topologyv1.Topology{}
		g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: deployed, Name: "default"}, topology)).To(Succeed())
		g.Expect(topology.Finalizers).To(ContainElement("keystone.openstack.org/keystoneapi-keystone"))
		c := got.Status.Conditions.Get("DBReady")
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Message).To(HavePrefix("MariaDBDatabase keystone"), "it created the database and its account")
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())

	// An external KeystoneAPI and a registration.
	ks := fakekeystone.New("admin", "secret-admin")
	defer ks.Close()
	registerExternal(ctx, t, admin, external, ks.URL)
	g.Eventually(func(g Gomega) {
		svc := &keystonev1.KeystoneService{}
		g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: external, Name: "glance"}, svc)).To(Succeed())
		g.Expect(svc.Status.Conditions.IsTrue("Ready")).To(BeTrue(), "%v", svc.Status.Conditions)
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())

	// The API server refused only the two optional permissions.
	refusals = refused.paths()
	g.Expect(refusals).NotTo(BeEmpty())
	for _, r := range refusals {
		g.Expect(slices.Contains([]string{"GET /api/v1/namespaces/kube-system",
			"PATCH /apis/topology.openstack.org/v1beta1/namespaces/openstack/topologies/default"}, r)).To(BeTrue(), "refused: %s", r)
	}

	// Switching back: the operator stopped, the hand-back leaves keystone-operator's
	// finalizers, on a real API server (kinds it lacks, such as TransportURL here, skipped).
	stop()
	changes, err := handback.Plan(ctx, admin, deployed)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changes).NotTo(BeEmpty())
	g.Expect(handback.Apply(ctx, admin, changes)).To(Succeed())
	got := &keystonev1.KeystoneAPI{}
	g.Expect(admin.Get(ctx, client.ObjectKeyFromObject(api), got)).To(Succeed())
	g.Expect(got.Finalizers).To(Equal([]string{"openstack.org/keystoneapi"}))
	topology := &topologyv1.Topology{}
	g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: deployed, Name: "default"}, topology)).To(Succeed())
	g.Expect(topology.Finalizers).To(Equal([]string{"openstack.org/keystoneapi-keystone"}))
	again, err := handback.Plan(ctx, admin, deployed)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again).To(BeEmpty())
}
