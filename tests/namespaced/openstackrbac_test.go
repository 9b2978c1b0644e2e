package namespaced

import (
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/cmd/manager"
	"github.com/keystone-stepwise/keystone-operator/internal/handback"
	"github.com/keystone-stepwise/keystone-operator/tests/support/controlplane"
	"github.com/keystone-stepwise/keystone-operator/tests/support/fakekeystone"
	"github.com/keystone-stepwise/keystone-operator/tests/support/openstackrbac"
	. "github.com/onsi/gomega"
	topologyv1 "github.com/openstack-k8s-operators/infra-operator/apis/topology/v1beta1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// openstackOperatorUser is the ServiceAccount openstack-operator runs keystone-operator
// (and this image in its place) as.
const openstackOperatorUser = "system:serviceaccount:openstack-operators:keystone-operator-controller-manager"

// operatorsNamespace is where openstack-operator runs keystone-operator.
const operatorsNamespace = "openstack-operators"

// TestOpenStackOperatorRBAC runs the manager as openstack-operator runs keystone-operator:
// its ServiceAccount, with nothing but the ClusterRole and the leader election Role
// openstack-operator gives it (openstackrbac), leader election on in its namespace. A
// deployed KeystoneAPI with a topologyRef holds its Topology (with an update, where
// patch is not granted, keeping the fields this operator's Go type lacks), an external
// one registers a service under marks naming the cluster (an identity made once in a
// ConfigMap of the operators' namespace), and the API server's audit log shows not one
// request answered 403.
func TestOpenStackOperatorRBAC(t *testing.T) {
	g := NewWithT(t)
	cfg, admin, ctx, auditLog := startAuditedAPIServer(t, true)

	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "keystone-operator-manager-role"}, Rules: openstackrbac.Rules()}
	g.Expect(admin.Create(ctx, role)).To(Succeed())
	g.Expect(admin.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "keystone-operator-manager-rolebinding"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: openstackOperatorUser}},
	})).To(Succeed())
	deployed, external := "openstack", "external"
	for _, ns := range []string{deployed, external, operatorsNamespace} {
		g.Expect(admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	}
	election := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: operatorsNamespace, Name: "keystone-operator-leader-election-role"},
		Rules: openstackrbac.LeaderElectionRules()}
	g.Expect(admin.Create(ctx, election)).To(Succeed())
	g.Expect(admin.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: operatorsNamespace, Name: "keystone-operator-leader-election-rolebinding"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: election.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: openstackOperatorUser}},
	})).To(Succeed())

	// A Topology CRD newer than the operator's Go type: a field it does not know.
	crdScheme := runtime.NewScheme()
	g.Expect(apiextensionsv1.AddToScheme(crdScheme)).To(Succeed())
	crds, err := client.New(cfg, client.Options{Scheme: crdScheme})
	g.Expect(err).NotTo(HaveOccurred())
	crd := &apiextensionsv1.CustomResourceDefinition{}
	g.Expect(crds.Get(ctx, client.ObjectKey{Name: "topologies.topology.openstack.org"}, crd)).To(Succeed())
	for i := range crd.Spec.Versions {
		spec := crd.Spec.Versions[i].Schema.OpenAPIV3Schema.Properties["spec"]
		spec.Properties["futureField"] = apiextensionsv1.JSONSchemaProps{Type: "string"}
		crd.Spec.Versions[i].Schema.OpenAPIV3Schema.Properties["spec"] = spec
	}
	g.Expect(crds.Update(ctx, crd)).To(Succeed())

	opCfg := rest.CopyConfig(cfg)
	opCfg.Impersonate = rest.ImpersonationConfig{UserName: openstackOperatorUser,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + operatorsNamespace, "system:authenticated"}}
	_, stop := startManager(ctx, t, opCfg, manager.Options{MetricsAddr: "0", ProbeAddr: "0",
		LeaderElection: true, LeaderElectionNamespace: operatorsNamespace})

	// The start-up check: what is missing is optional, and said so.
	var said []string
	log := funcr.New(func(_, args string) { said = append(said, args) }, funcr.Options{})
	op, err := client.New(opCfg, client.Options{Scheme: manager.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	lacking, _, err := manager.CheckPermissions(ctx, op, deployed, log)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(lacking).To(Equal([]string{"create policy/poddisruptionbudgets", "delete policy/poddisruptionbudgets",
		"get /namespaces", "get policy/poddisruptionbudgets", "list policy/poddisruptionbudgets",
		"patch policy/poddisruptionbudgets", "patch topology.openstack.org/topologies", "update policy/poddisruptionbudgets",
		"use security.openshift.io/securitycontextconstraints", "watch /pods", "watch policy/poddisruptionbudgets"}))
	g.Expect(said).To(HaveLen(11))
	g.Expect(said[2]).To(ContainSubstring(`"msg"="optional permission missing" "permission"="get /namespaces"`))

	// The cluster's identity, made once and kept in the operators' namespace.
	identityConfigMap := &corev1.ConfigMap{}
	g.Eventually(func() error {
		return admin.Get(ctx, client.ObjectKey{Namespace: operatorsNamespace, Name: identity.ClusterConfigMap}, identityConfigMap)
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	cluster := identityConfigMap.Data[identity.ClusterKey]
	g.Expect(cluster).To(MatchRegexp(`^[0-9a-f-]{36}$`), "a new identity: kube-system is not readable here")

	// A deployed KeystoneAPI with a topologyRef holds its Topology, whose unknown field stays.
	g.Expect(admin.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "topology.openstack.org/v1beta1", "kind": "Topology",
		"metadata": map[string]any{"namespace": deployed, "name": "default"},
		"spec": map[string]any{"futureField": "kept", "topologySpreadConstraints": []any{map[string]any{
			"maxSkew": int64(1), "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway"}}},
	}})).To(Succeed())
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
		withField := &unstructured.Unstructured{}
		withField.SetGroupVersionKind(topologyv1.GroupVersion.WithKind("Topology"))
		g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: deployed, Name: "default"}, withField)).To(Succeed())
		future, _, _ := unstructured.NestedString(withField.Object, "spec", "futureField")
		g.Expect(future).To(Equal("kept"), "a field the Go type lacks is kept")
		c := got.Status.Conditions.Get("DBReady")
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Message).To(HavePrefix("MariaDBDatabase keystone"), "it created the database and its account")
		// The pods' Role grants what this role lets the operator grant: anyuid, not nonroot-v2.
		podRole := &rbacv1.Role{}
		g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: deployed, Name: "keystone-keystone-role"}, podRole)).To(Succeed())
		g.Expect(podRole.Rules).To(HaveLen(1))
		g.Expect(podRole.Rules[0].ResourceNames).To(Equal([]string{"anyuid"}))
		g.Expect(got.Status.Conditions.Get(keystonev1.KeystoneAPIServiceAccountReady).Message).To(HaveSuffix("may use SecurityContextConstraints anyuid"))
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

	// Marks in Keystone name the cluster.
	users := ks.List(fakekeystone.Users, map[string]any{"name": "glance-" + external})
	g.Expect(users).To(HaveLen(1))
	g.Expect(users[0]["keystone_operator_owner"]).To(HaveSuffix("@"+cluster), "the mark names the cluster")

	// Not one request of the operator was answered 403.
	stop()
	events, err := controlplane.ReadAudit(auditLog)
	g.Expect(err).NotTo(HaveOccurred())
	asked, refusals := 0, []string{}
	for _, e := range events {
		if e.Username() != openstackOperatorUser {
			continue
		}
		asked++
		if e.Code() == 403 {
			refusals = append(refusals, e.Verb+" "+e.RequestURI)
		}
	}
	g.Expect(asked).To(BeNumerically(">", 50), "the audit log holds the operator's requests")
	g.Expect(refusals).To(BeEmpty(), "requests the API server refused")

	// Switching back: the operator stopped, the hand-back leaves keystone-operator's
	// finalizers, on a real API server (kinds it lacks, such as TransportURL here, skipped).
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
