package functional

import (
	"time"

	"github.com/keystone-stepwise/keystone-operator/controllers/keystoneapi"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	memcachedv1 "github.com/openstack-k8s-operators/infra-operator/apis/memcached/v1beta1"
	rabbitmqv1 "github.com/openstack-k8s-operators/infra-operator/apis/rabbitmq/v1beta1"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	mariadbv1 "github.com/openstack-k8s-operators/mariadb-operator/api/v1beta1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The KeystoneAPI's critical path (issue 41, docs/keystoneapi.md "What runs at once"):
// what does not need a step that is not done yet goes ahead of it; Ready still waits for
// every step.
var _ = Describe("KeystoneAPI critical path", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	named := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: ns, Name: name} }

	It("rolls the API pods out while bootstrap runs, and is Ready only once both are done", func() {
		key := createWithInputs(keystoneAPI(ns))
		finishJob(ns, "keystone-db-sync", true, "")
		By("the Deployment is created before the bootstrap Job completes")
		Eventually(func() error { return k8sClient.Get(ctx, named("keystone"), &appsv1.Deployment{}) }).Should(Succeed())
		job := &batchv1.Job{}
		Expect(k8sClient.Get(ctx, named("keystone-bootstrap"), job)).To(Succeed())
		Expect(job.Status.Succeeded).To(BeZero())
		expectConditions(key, condition{"BootstrapReady", "False", "Created", "Info"}, condition{"DeploymentReady", "False", "Created", "Info"})

		By("the pods ready first: Ready still waits for bootstrap, and names it")
		rollOut(ns, "keystone", 1)
		expectConditions(key, condition{"DeploymentReady", "True", "Ready", ""}, condition{"BootstrapReady", "False", "Created", "Info"},
			condition{"Ready", "False", "Created", "Info"})
		Expect(message(key, "Ready")).To(HavePrefix("BootstrapReady"))
		Consistently(func(g Gomega) bool {
			return getAPI(key)(g).Status.Conditions.IsTrue(lc.ReadyCondition)
		}, 500*time.Millisecond, 50*time.Millisecond).Should(BeFalse())
		finishJob(ns, "keystone-bootstrap", true, "")
		expectConditions(key, condition{"Ready", "True", "Ready", ""})
	})

	It("fails Ready with bootstrap's own words when bootstrap fails, though the pods are ready", func() {
		key := createWithInputs(keystoneAPI(ns))
		finishJob(ns, "keystone-db-sync", true, "")
		rollOut(ns, "keystone", 1)
		finishJob(ns, "keystone-bootstrap", false, "keystone-manage bootstrap: Could not find role: admin")
		expectConditions(key, condition{"DeploymentReady", "True", "Ready", ""},
			condition{"BootstrapReady", "False", "CreationFailed", "Error"}, condition{"Ready", "False", "CreationFailed", "Error"},
			condition{"Stalled", "True", "CreationFailed", ""})
		Expect(message(key, "Ready")).To(ContainSubstring("Could not find role: admin"))
	})

	It("asks for the database, its account and the TransportURL, and holds the Memcached, at once", func() {
		api := keystoneAPI(ns)
		Expect(k8sClient.Create(ctx, api)).To(Succeed())
		createSecret(ns, "osp-secret", map[string]string{"AdminPassword": "secret-admin"})
		key := client.ObjectKeyFromObject(api)
		By("with no Memcached yet and the database not Ready, the TransportURL is asked for beside the database")
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, named("keystone"), &mariadbv1.MariaDBDatabase{})).To(Succeed())
			g.Expect(k8sClient.Get(ctx, named(api.Spec.DatabaseAccount), &mariadbv1.MariaDBAccount{})).To(Succeed())
			g.Expect(k8sClient.Get(ctx, named(keystoneapi.TransportURLName(api)), &rabbitmqv1.TransportURL{})).To(Succeed())
		}).Should(Succeed())
		expectConditions(key, condition{"DBReady", "False", "Requested", "Info"}, condition{"MemcachedReady", "False", "DependencyNotFound", "Warning"})
		By("a Memcached that appears is held while the database is still not Ready")
		createMemcached(ns, "memcached")
		markMemcachedReady(ns, "memcached")
		Eventually(func(g Gomega) []string {
			mc := &memcachedv1.Memcached{}
			g.Expect(k8sClient.Get(ctx, named("memcached"), mc)).To(Succeed())
			return mc.Finalizers
		}).Should(ContainElement("keystone.openstack.org/keystoneapi-keystone"))
		expectConditions(key, condition{"DBReady", "False", "Requested", "Info"}, condition{"MemcachedReady", "True", "Ready", ""},
			condition{"Ready", "False", "Requested", "Info"})
		Expect(message(key, "Ready")).To(HavePrefix("DBReady"))
		By("then the rest as before")
		markDatabaseReady(ns, api.Spec.DatabaseInstance)
		playNotifications(key)
		finishRollout(key, 1)
	})
})
