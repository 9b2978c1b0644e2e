package functional

import (
	"fmt"
	"strings"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/controllers/keystoneapi"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/tests/support/testutil"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	memcachedv1 "github.com/openstack-k8s-operators/infra-operator/apis/memcached/v1beta1"
	rabbitmqv1 "github.com/openstack-k8s-operators/infra-operator/apis/rabbitmq/v1beta1"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	"github.com/openstack-k8s-operators/lib-common/modules/storage"
	mariadbv1 "github.com/openstack-k8s-operators/mariadb-operator/api/v1beta1"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

const galera = "openstack"

// expectConditions waits until the KeystoneAPI's conditions include want.
func expectConditions(key types.NamespacedName, want ...condition) {
	GinkgoHelper()
	expectObservedConditions(key, &keystonev1.KeystoneAPI{}, func(a *keystonev1.KeystoneAPI) (lc.Conditions, int64) {
		return a.Status.Conditions, a.Status.ObservedGeneration
	}, want...)
}

func message(key types.NamespacedName, t lc.Type) string {
	c := getAPI(key)(Default).Status.Conditions.Get(t)
	Expect(c).NotTo(BeNil())
	return c.Message
}

// createWithInputs creates api with every input it needs, and plays its database,
// memcached and notifications' TransportURL ready: what remains is the db-sync job.
func createWithInputs(api *keystonev1.KeystoneAPI) types.NamespacedName {
	GinkgoHelper()
	ns := api.Namespace
	Expect(k8sClient.Create(ctx, api)).To(Succeed())
	createSecret(ns, "osp-secret", map[string]string{"AdminPassword": "secret-admin"})
	createMemcached(ns, "memcached")
	markMemcachedReady(ns, "memcached")
	markDatabaseReady(ns, galera)
	playNotifications(client.ObjectKeyFromObject(api))
	return client.ObjectKeyFromObject(api)
}

// playNotifications plays infra-operator for the TransportURL of the KeystoneAPI key
// (asked of the cluster rabbitmq by default): Ready, with the default user's URL.
func playNotifications(key types.NamespacedName) {
	GinkgoHelper()
	playTransportURL(key.Namespace, key.Name+"-keystone-transport",
		"rabbit://default_user:rabbit-password@rabbitmq."+key.Namespace+".svc:5672/?ssl=0")
}

// deployReady walks a KeystoneAPI from nothing to Ready, playing every dependency.
func deployReady(ns string, mutate ...func(*keystonev1.KeystoneAPI)) types.NamespacedName {
	GinkgoHelper()
	api := keystoneAPI(ns)
	for _, m := range mutate {
		m(api)
	}
	key := createWithInputs(api)
	finishRollout(key, ptr.Deref(api.Spec.Replicas, 1))
	return key
}

// finishRollout plays the Job controller for db-sync and bootstrap and the Deployment
// controller, and waits for Ready.
func finishRollout(key types.NamespacedName, replicas int32) {
	GinkgoHelper()
	finishJob(key.Namespace, "keystone-db-sync", true, "")
	finishJob(key.Namespace, "keystone-bootstrap", true, "")
	rollOut(key.Namespace, key.Name, replicas)
	expectConditions(key, condition{"Ready", "True", "Ready", ""})
}

var _ = Describe("KeystoneAPI", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("reports in a condition, not in a retry loop, what no object can be made from", func() {
		By("a name too long for the trust flush CronJob: nothing is created")
		long := keystoneAPI(ns)
		long.Name = strings.Repeat("k", deploy.MaxNameLength+1)
		Expect(k8sClient.Create(ctx, long)).To(Succeed())
		longKey := client.ObjectKeyFromObject(long)
		expectConditions(longKey, condition{"Ready", "False", "InvalidInput", "Error"},
			condition{"InputReady", "False", "InvalidInput", "Error"}, condition{"Stalled", "True", "InvalidInput", ""})
		scrapeSeries() // a stalled object, for the alerts (monitoring_test.go)
		Expect(message(longKey, "InputReady")).To(ContainSubstring("at most 47"))
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keystone"}, &mariadbv1.MariaDBDatabase{})).NotTo(Succeed())
		Expect(k8sClient.Delete(ctx, long)).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, longKey, long)) }).Should(BeTrue(), "no finalizer left")

		By("a hostPath volume in extraMounts, which keystone-operator's schema no longer has: refused in InputReady")
		host := keystoneAPI(ns)
		host.Name = "hostpath"
		host.Spec.ExtraMounts = []keystonev1.KeystoneExtraMounts{{VolMounts: []storage.VolMounts{{
			Volumes: []storage.Volume{{Name: "host", VolumeSource: storage.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/etc"}}}},
			Mounts:  []corev1.VolumeMount{{Name: "host", MountPath: "/host"}},
		}}}}
		Expect(k8sClient.Create(ctx, host)).To(Succeed())
		expectConditions(client.ObjectKeyFromObject(host), condition{"InputReady", "False", "InvalidInput", "Error"})
		Expect(message(client.ObjectKeyFromObject(host), "InputReady")).To(ContainSubstring(
			"extraMounts volume host is a hostPath volume: extraMounts volumes may be configMap, secret, emptyDir, persistentVolumeClaim, projected, nfs or csi"))
		Expect(k8sClient.Delete(ctx, host)).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(host), host)) }).Should(BeTrue())

		By("a trust flush schedule no CronJob accepts: that step says so, the rest rolls out")
		key := deployReady(ns)
		updateAPI(key, func(a *keystonev1.KeystoneAPI) { a.Spec.TrustFlushSchedule = "every hour" })
		expectConditions(key, condition{"Ready", "False", "InvalidInput", "Error"},
			condition{"DeploymentReady", "True", "Ready", ""}, condition{"CronJobReady", "False", "InvalidInput", "Error"})
		Expect(message(key, "CronJobReady")).To(ContainSubstring(`trustFlushSchedule "every hour" is not a cron schedule`))
		updateAPI(key, func(a *keystonev1.KeystoneAPI) { a.Spec.TrustFlushSchedule = "@hourly" })
		expectConditions(key, condition{"Ready", "True", "Ready", ""})
	})

	It("walks every step forward, each with its reason and severity", func() {
		Expect(k8sClient.Create(ctx, keystoneAPI(ns))).To(Succeed())
		key := types.NamespacedName{Namespace: ns, Name: "keystone"}

		By("missing the admin secret")
		expectConditions(key,
			condition{"Ready", "False", "DependencyNotFound", "Warning"},
			condition{"InputReady", "False", "DependencyNotFound", "Warning"},
			condition{"DBReady", "Unknown", "Init", ""})
		Expect(message(key, "Ready")).To(Equal("InputReady (1/14 ready): secret osp-secret with key AdminPassword not found"))

		By("the secret arrives: the pods' ServiceAccount is made and the database is requested")
		createSecret(ns, "osp-secret", map[string]string{"AdminPassword": "secret-admin"})
		expectConditions(key,
			condition{"Ready", "False", "Requested", "Info"},
			condition{"InputReady", "True", "Ready", ""},
			condition{"ServiceAccountReady", "True", "Ready", ""},
			condition{"DBReady", "False", "Requested", "Info"})
		// The operator, on the permissions config/rbac grants, gave the pods' ServiceAccount
		// the use of nonroot-v2 (OpenShift admits the image's fixed UID under it), and nothing more.
		podAccount := "system:serviceaccount:" + ns + ":keystone-keystone"
		Expect(allowed(podAccount, authorizationv1.ResourceAttributes{Namespace: ns, Verb: "use",
			Group: "security.openshift.io", Resource: "securitycontextconstraints", Name: "nonroot-v2"})).To(BeTrue())
		Expect(allowed(podAccount, authorizationv1.ResourceAttributes{Namespace: ns, Verb: "use",
			Group: "security.openshift.io", Resource: "securitycontextconstraints", Name: "anyuid"})).To(BeFalse())
		Expect(allowed(podAccount, authorizationv1.ResourceAttributes{Namespace: ns, Verb: "use",
			Group: "security.openshift.io", Resource: "securitycontextconstraints", Name: "privileged"})).To(BeFalse())
		Expect(allowed(podAccount, authorizationv1.ResourceAttributes{Namespace: ns, Verb: "get", Resource: "pods"})).To(BeFalse())
		role := &rbacv1.Role{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keystone-keystone-role"}, role)).To(Succeed())
		Expect(metav1.IsControlledBy(role, getAPI(key)(Default))).To(BeTrue())
		db := &mariadbv1.MariaDBDatabase{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keystone"}, db)).To(Succeed())
		Expect(db.Labels).To(HaveKeyWithValue("dbName", galera))
		Expect(db.Finalizers).To(ContainElement("keystone.openstack.org/keystoneapi-keystone"))
		acc := &mariadbv1.MariaDBAccount{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keystone"}, acc)).To(Succeed())
		Expect(acc.Spec.Secret).To(Equal("keystone-db-secret"))

		By("the database is ready: memcached is missing")
		markDatabaseReady(ns, galera)
		expectConditions(key,
			condition{"DBReady", "True", "Ready", ""},
			condition{"MemcachedReady", "False", "DependencyNotFound", "Warning"})
		Expect(getAPI(key)(Default).Status.DatabaseHostname).To(Equal(galera + "." + ns + ".svc"))

		By("memcached exists but is not ready")
		createMemcached(ns, "memcached")
		expectConditions(key, condition{"MemcachedReady", "False", "Requested", "Info"})

		By("memcached is ready: notifications wait for infra-operator's TransportURL (cluster rabbitmq by default)")
		markMemcachedReady(ns, "memcached")
		expectConditions(key,
			condition{"Ready", "False", "Requested", "Info"},
			condition{"MemcachedReady", "True", "Ready", ""},
			condition{"RabbitMqTransportURLReady", "False", "Requested", "Info"},
			condition{"ServiceConfigReady", "Unknown", "Init", ""})
		tu := &rabbitmqv1.TransportURL{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keystone-keystone-transport"}, tu)).To(Succeed())
		Expect(tu.Spec.RabbitmqClusterName).To(Equal("rabbitmq"))

		By("the TransportURL is ready: config, keys, and the db-sync job runs")
		playNotifications(key)
		expectConditions(key,
			condition{"Ready", "False", "Created", "Info"},
			condition{"RabbitMqTransportURLReady", "True", "Ready", ""},
			condition{"ServiceConfigReady", "True", "Ready", ""},
			condition{"FernetKeysReady", "True", "Ready", ""},
			condition{"DBSyncReady", "False", "Created", "Info"},
			condition{"ExposeServiceReady", "Unknown", "Init", ""})
		cfg := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keystone-config-data"}, cfg)).To(Succeed())
		Expect(string(cfg.Data["keystone.conf"])).To(ContainSubstring("memcache_servers = memcached-0.memcached." + ns + ".svc:11211"))
		Expect(string(cfg.Data["keystone.conf"])).To(ContainSubstring("connection = mysql+pymysql://" + galera + "." + ns + ".svc/keystone?"))
		Expect(string(cfg.Data["my.cnf"])).To(MatchRegexp(`password = "[0-9a-f]{32}"`), "the generated database password")
		keys := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keystone"}, keys)).To(Succeed())
		Expect(deploy.FernetKeys(keys.Data)).To(HaveLen(5))
		Expect(deploy.CredentialKeys(keys.Data)).To(HaveLen(2))
		Expect(getAPI(key)(Default).Status.Hash).To(HaveKey("config"))

		By("db-sync succeeds: services exposed, bootstrap runs")
		finishJob(ns, "keystone-db-sync", true, "")
		expectConditions(key,
			condition{"DBSyncReady", "True", "Ready", ""},
			condition{"ExposeServiceReady", "True", "Ready", ""},
			condition{"BootstrapReady", "False", "Created", "Info"})
		api := getAPI(key)(Default)
		Expect(api.Status.APIEndpoints).To(Equal(map[string]string{
			"public":   "http://keystone-public." + ns + ".svc:5000",
			"internal": "http://keystone-internal." + ns + ".svc:5000",
		}))
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keystone-db-sync"}, &batchv1.Job{}))
		}).Should(BeTrue(), "a finished job is deleted unless preserveJobs")
		boot := &batchv1.Job{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keystone-bootstrap"}, boot)).To(Succeed())
		Expect(boot.Spec.Template.Spec.Containers[0].Command[2]).To(ContainSubstring("--bootstrap-region-id 'regionOne'"))
		Expect(boot.Spec.Template.Spec.ServiceAccountName).To(Equal("keystone-keystone"))

		By("bootstrap succeeds: the deployment rolls out")
		finishJob(ns, "keystone-bootstrap", true, "")
		expectConditions(key,
			condition{"BootstrapReady", "True", "Ready", ""},
			condition{"DeploymentReady", "False", "Created", "Info"})

		By("a replica is ready: Ready")
		rollOut(ns, "keystone", 1)
		expectConditions(key, condition{"Ready", "True", "Ready", ""}, condition{"DeploymentReady", "True", "Ready", ""},
			condition{"CronJobReady", "True", "Ready", ""})
		api = getAPI(key)(Default)
		Expect(api.Status.ReadyCount).To(BeEquivalentTo(1))
		Expect(api.IsReady()).To(BeTrue())
		Expect(api.Status.Conditions.Has("Reconciling")).To(BeFalse())
		Expect(kstatusOf(key)).To(Equal(status.CurrentStatus))
		Expect(gauge("KeystoneAPI", ns, "keystone", "Ready", "True")).To(Equal(1.0))
		Expect(gauge("KeystoneAPI", ns, "keystone", "Ready", "False")).To(Equal(0.0))
		Expect(gauge("KeystoneAPI", ns, "keystone", "DeploymentReady", "True")).To(Equal(1.0))
	})

	It("stalls on a failed db-sync with the job's failure in the message, and recovers on a spec change", func() {
		key := createWithInputs(keystoneAPI(ns))
		finishJob(ns, "keystone-db-sync", false, "sqlalchemy.exc.OperationalError: (1045, \"Access denied for user 'keystone'\")")
		expectConditions(key,
			condition{"Ready", "False", "CreationFailed", "Error"},
			condition{"DBSyncReady", "False", "CreationFailed", "Error"},
			condition{"Stalled", "True", "CreationFailed", ""})
		msg := message(key, "DBSyncReady")
		Expect(msg).To(ContainSubstring("job keystone-db-sync failed after 4 attempts"))
		Expect(managerWrites.Watched("/api/v1/pods")).To(BeFalse(), "the jobs' pods are watched, not every Pod of the cluster")
		Expect(managerWrites.Watched("/api/v1/pods?labelSelector=keystone.openstack.org/job")).To(BeTrue())
		Expect(msg).To(ContainSubstring("BackoffLimitExceeded"))
		Expect(msg).To(ContainSubstring("exit code 1: sqlalchemy.exc.OperationalError: (1045"))
		Expect(kstatusOf(key)).To(Equal(status.FailedStatus))
		Eventually(func(g Gomega) {
			events := &corev1.EventList{}
			g.Expect(k8sClient.List(ctx, events, client.InNamespace(ns))).To(Succeed())
			var warnings []string
			for _, e := range events.Items {
				if e.InvolvedObject.Name == "keystone" && e.Type == corev1.EventTypeWarning {
					warnings = append(warnings, e.Reason+": "+e.Message)
				}
			}
			g.Expect(warnings).To(ContainElement(HavePrefix("CreationFailed: DBSyncReady is False: job keystone-db-sync failed")))
		}).Should(Succeed(), "a Warning event for the failed step")

		By("no new attempt while nothing changes")
		job := &batchv1.Job{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keystone-db-sync"}, job)).To(Succeed())
		uid := job.UID
		touch(key)
		Consistently(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keystone-db-sync"}, job)).To(Succeed())
			g.Expect(job.UID).To(Equal(uid))
		}, time.Second).Should(Succeed())

		By("a spec change replaces the job")
		updateAPI(key, func(a *keystonev1.KeystoneAPI) {
			a.Spec.CustomServiceConfig = "[database]\nconnection_recycle_time = 60\n"
		})
		expectConditions(key, condition{"DBSyncReady", "False", "Created", "Info"})
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keystone-db-sync"}, job)).To(Succeed())
			g.Expect(job.UID).NotTo(Equal(uid))
		}).Should(Succeed())
		Expect(getAPI(key)(Default).Status.Conditions.Has("Stalled")).To(BeFalse())
		finishJob(ns, "keystone-db-sync", true, "")
		expectConditions(key, condition{"DBSyncReady", "True", "Ready", ""})
	})

	It("takes a job as done the moment its pod succeeds, before the Job controller says so, and only its own pod", func() {
		key := createWithInputs(keystoneAPI(ns))
		expectConditions(key, condition{"DBSyncReady", "False", "Created", "Info"})

		By("a failed attempt is no success: the Job retries")
		jobPod(ns, "keystone-db-sync", "keystone-db-sync-first", corev1.PodFailed, "")
		touch(key)
		Consistently(func(g Gomega) {
			g.Expect(getAPI(key)(g).Status.Conditions.Get("DBSyncReady").Status).To(Equal(corev1.ConditionFalse))
		}, time.Second).Should(Succeed())

		By("its second pod succeeds: done, the Job (never marked complete here) deleted")
		jobPod(ns, "keystone-db-sync", "keystone-db-sync-second", corev1.PodSucceeded, "")
		expectConditions(key, condition{"DBSyncReady", "True", "Ready", ""}, condition{"BootstrapReady", "False", "Created", "Info"})
		Expect(message(key, "DBSyncReady")).To(Equal("job keystone-db-sync succeeded for the current inputs"))
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keystone-db-sync"}, &batchv1.Job{}))
		}).Should(BeTrue(), "a finished job is deleted unless preserveJobs")

		By("a pod of the bootstrap's labels that another owner controls is not the bootstrap's")
		jobPod(ns, "keystone-bootstrap", "keystone-bootstrap-forged", corev1.PodSucceeded, "another-owner")
		touch(key)
		Consistently(func(g Gomega) {
			g.Expect(getAPI(key)(g).Status.Conditions.Get("BootstrapReady").Status).To(Equal(corev1.ConditionFalse))
		}, time.Second).Should(Succeed())
		jobPod(ns, "keystone-bootstrap", "keystone-bootstrap-own", corev1.PodSucceeded, "")
		expectConditions(key, condition{"BootstrapReady", "True", "Ready", ""}, condition{"DeploymentReady", "False", "Created", "Info"})
		rollOut(ns, "keystone", 1)
		expectConditions(key, condition{"Ready", "True", "Ready", ""})
	})

	It("reports a rollout past its progress deadline as an Error", func() {
		key := deployReady(ns)
		exceedDeadline(ns, "keystone")
		expectConditions(key,
			condition{"Ready", "False", "CreationFailed", "Error"},
			condition{"DeploymentReady", "False", "CreationFailed", "Error"})
		Expect(message(key, "DeploymentReady")).To(ContainSubstring("exceeded its progress deadline"))
		rollOut(ns, "keystone", 1)
		expectConditions(key, condition{"Ready", "True", "Ready", ""})
	})

	It("goes back to not Ready when the admin secret is deleted, and forward when it returns", func() {
		key := deployReady(ns)
		Expect(k8sClient.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "osp-secret"}})).To(Succeed())
		expectConditions(key,
			condition{"Ready", "False", "DependencyNotFound", "Warning"},
			condition{"InputReady", "False", "DependencyNotFound", "Warning"})
		createSecret(ns, "osp-secret", map[string]string{"AdminPassword": "secret-admin"})
		expectConditions(key, condition{"Ready", "True", "Ready", ""})
	})

	It("follows a new generation; the steps the change cannot affect stay True, as a watch sees them", func() {
		key := deployReady(ns)
		before := getAPI(key)(Default)
		oldHash := before.Status.Hash["config"]
		unaffected := []lc.Type{"InputReady", "DBReady", "MemcachedReady", "FernetKeysReady", "ExposeServiceReady",
			"BootstrapReady", "DeploymentReady", "OpenStackConfigReady"}
		times := map[lc.Type]metav1.Time{}
		for _, t := range unaffected {
			times[t] = before.Status.Conditions.Get(t).LastTransitionTime
		}
		seen := watchConditions(key)
		time.Sleep(1100 * time.Millisecond) // transition times have a resolution of one second

		updateAPI(key, func(a *keystonev1.KeystoneAPI) { a.Spec.CustomServiceConfig = "[DEFAULT]\ndebug = true\n" })
		expectConditions(key,
			condition{"Ready", "False", "Created", "Info"},
			condition{"DBSyncReady", "False", "Created", "Info"},
			condition{"ExposeServiceReady", "True", "Ready", ""},
			condition{"DeploymentReady", "True", "Ready", ""})
		after := getAPI(key)(Default)
		Expect(after.Status.Hash["config"]).NotTo(Equal(oldHash))
		Expect(after.Status.Conditions.Get("DeploymentReady").Message).To(ContainSubstring("pods keep their configuration until DBSyncReady is True"))
		finishJob(ns, "keystone-db-sync", true, "")
		Eventually(func(g Gomega) {
			dep := &appsv1.Deployment{}
			g.Expect(k8sClient.Get(ctx, key, dep)).To(Succeed())
			g.Expect(dep.Spec.Template.Annotations).To(HaveKeyWithValue(deploy.HashAnnotation, after.Status.Hash["config"]))
		}).Should(Succeed())
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keystone-bootstrap"}, &batchv1.Job{})).NotTo(Succeed(),
			"a new configuration alone does not bootstrap again")
		rollOut(ns, "keystone", 1)
		expectConditions(key, condition{"Ready", "True", "Ready", ""})

		for _, t := range unaffected {
			if t == "DeploymentReady" {
				continue // the new pods roll out: a real change
			}
			Expect(seen.statuses(t)).To(HaveEach(corev1.ConditionTrue), "%s as the watch saw it", t)
			Expect(getAPI(key)(Default).Status.Conditions.Get(t).LastTransitionTime).To(Equal(times[t]), t)
		}
	})

	It("keeps serving, and scales, while Memcached blips", func() {
		key := deployReady(ns)
		seen := watchConditions(key)
		unmarkMemcachedReady(ns, "memcached")
		expectConditions(key,
			condition{"Ready", "False", "Requested", "Info"},
			condition{"MemcachedReady", "False", "Requested", "Info"},
			condition{"ServiceConfigReady", "True", "Ready", ""},
			condition{"DeploymentReady", "True", "Ready", ""})
		By("a replicas change during the blip is applied")
		updateAPI(key, func(a *keystonev1.KeystoneAPI) { a.Spec.Replicas = ptr.To[int32](2) })
		Eventually(func(g Gomega) {
			dep := &appsv1.Deployment{}
			g.Expect(k8sClient.Get(ctx, key, dep)).To(Succeed())
			g.Expect(dep.Spec.Replicas).To(HaveValue(BeEquivalentTo(2)))
		}).Should(Succeed())
		rollOut(ns, "keystone", 2)
		expectConditions(key, condition{"DeploymentReady", "True", "Ready", ""}, condition{"MemcachedReady", "False", "Requested", "Info"})
		Expect(getAPI(key)(Default).Status.ReadyCount).To(BeEquivalentTo(2))
		markMemcachedReady(ns, "memcached")
		expectConditions(key, condition{"Ready", "True", "Ready", ""})
		for _, t := range []lc.Type{"DBReady", "ServiceConfigReady", "FernetKeysReady", "DBSyncReady", "ExposeServiceReady", "BootstrapReady"} {
			Expect(seen.statuses(t)).To(HaveEach(corev1.ConditionTrue), "%s as the watch saw it", t)
		}
	})

	It("is Ready scaled to 0, with readyCount 0", func() {
		key := deployReady(ns)
		updateAPI(key, func(a *keystonev1.KeystoneAPI) { a.Spec.Replicas = ptr.To[int32](0) })
		Eventually(func(g Gomega) {
			dep := &appsv1.Deployment{}
			g.Expect(k8sClient.Get(ctx, key, dep)).To(Succeed())
			g.Expect(dep.Spec.Replicas).To(HaveValue(BeZero()))
		}).Should(Succeed())
		rollOut(ns, "keystone", 0)
		expectConditions(key, condition{"Ready", "True", "Ready", ""})
		Expect(getAPI(key)(Default).Status.ReadyCount).To(BeZero())
	})

	It("gives two replicas or more a PodDisruptionBudget, one eviction at a time, and removes it at one replica", func() {
		key := deployReady(ns)
		pdbMessage := func() string { return getAPI(key)(Default).Status.Conditions.Get("PDBReady").Message }
		Expect(pdbMessage()).To(HavePrefix("no poddisruptionbudget at 1 replica(s): a drain evicts the API pods"))
		budget := &policyv1.PodDisruptionBudget{}
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, key, budget))).To(BeTrue())

		updateAPI(key, func(a *keystonev1.KeystoneAPI) { a.Spec.Replicas = ptr.To[int32](2) })
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, key, budget)).To(Succeed())
		}).Should(Succeed())
		Expect(budget.Spec.MaxUnavailable).To(HaveValue(Equal(intstr.FromInt32(1))))
		Expect(budget.Spec.Selector.MatchLabels).To(Equal(map[string]string{"service": "keystone", "owner": "keystone"}))
		Expect(budget.Spec.UnhealthyPodEvictionPolicy).To(HaveValue(Equal(policyv1.AlwaysAllow)))
		Expect(metav1.IsControlledBy(budget, getAPI(key)(Default))).To(BeTrue())
		rollOut(ns, "keystone", 2)
		expectConditions(key, condition{"Ready", "True", "Ready", ""}, condition{"PDBReady", "True", "Ready", ""})
		Expect(pdbMessage()).To(Equal("poddisruptionbudget keystone lets one of the 2 API pods be evicted at a time"))
		dep := &appsv1.Deployment{}
		Expect(k8sClient.Get(ctx, key, dep)).To(Succeed())
		Expect(dep.Spec.Strategy.RollingUpdate.MaxUnavailable).To(HaveValue(Equal(intstr.FromInt32(0))), "no fewer serving pods than asked")
		Expect(dep.Spec.Template.Spec.TerminationGracePeriodSeconds).To(HaveValue(BeEquivalentTo(190)), "5 s drain, at most 120 s as the last endpoint, 60 s apiTimeout, 5 s")

		updateAPI(key, func(a *keystonev1.KeystoneAPI) { a.Spec.Replicas = ptr.To[int32](1) })
		Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, key, &policyv1.PodDisruptionBudget{})) }).Should(BeTrue())
		rollOut(ns, "keystone", 1)
		expectConditions(key, condition{"Ready", "True", "Ready", ""})
		Expect(pdbMessage()).To(HavePrefix("no poddisruptionbudget at 1 replica(s)"))
	})

	It("removes from the pods what is removed from the spec: a nodeSelector key, a resource limit", func() {
		key := deployReady(ns)
		updateAPI(key, func(a *keystonev1.KeystoneAPI) {
			a.Spec.NodeSelector = &map[string]string{"zone": "a", "disk": "ssd"}
			a.Spec.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}
		})
		pods := func(g Gomega) corev1.PodSpec {
			dep := &appsv1.Deployment{}
			g.Expect(k8sClient.Get(ctx, key, dep)).To(Succeed())
			return dep.Spec.Template.Spec
		}
		Eventually(func(g Gomega) {
			p := pods(g)
			g.Expect(p.NodeSelector).To(Equal(map[string]string{"zone": "a", "disk": "ssd"}))
			g.Expect(p.Containers[0].Resources.Limits).To(HaveKey(corev1.ResourceMemory))
		}).Should(Succeed())
		updateAPI(key, func(a *keystonev1.KeystoneAPI) {
			a.Spec.NodeSelector = &map[string]string{"zone": "a"}
			a.Spec.Resources.Limits = nil
		})
		Eventually(func(g Gomega) {
			p := pods(g)
			g.Expect(p.NodeSelector).To(Equal(map[string]string{"zone": "a"}))
			g.Expect(p.Containers[0].Resources.Limits).To(BeEmpty())
		}).Should(Succeed())
	})

	It("performs no API write when a converged KeystoneAPI is reconciled again", func() {
		key := deployReady(ns)
		before := settledWrites(ns)
		for i := 0; i < 5; i++ {
			reconciledAfter("keystoneapi", func() { touch(key) })
		}
		Consistently(func() map[string]int64 { return writesIn(ns) }, 2*time.Second).Should(Equal(before))
	})

	It("moves its finalizer to a new Memcached and MariaDBAccount once its pods use them", func() {
		key := deployReady(ns)
		mine := "keystone.openstack.org/keystoneapi-keystone"
		holds := func(obj client.Object, name string) []string {
			GinkgoHelper()
			Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, obj)).To(Succeed())
			return obj.GetFinalizers()
		}
		createMemcached(ns, "memcached2")
		markMemcachedReady(ns, "memcached2")
		updateAPI(key, func(a *keystonev1.KeystoneAPI) {
			a.Spec.MemcachedInstance = "memcached2"
			a.Spec.DatabaseAccount = "keystone2"
		})
		acc := &mariadbv1.MariaDBAccount{}
		Eventually(func() error { return k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keystone2"}, acc) }).Should(Succeed())
		markReady(acc, &acc.Status.Conditions, types.NamespacedName{Namespace: ns, Name: "keystone2"})
		finishJob(ns, "keystone-db-sync", true, "")
		finishJob(ns, "keystone-bootstrap", true, "") // its inputs name the database account
		expectConditions(key, condition{"BootstrapReady", "True", "Ready", ""}, condition{"DeploymentReady", "False", "Created", "Info"})
		By("while the old pods run, the old Memcached and account stay held")
		Expect(holds(&memcachedv1.Memcached{}, "memcached")).To(ContainElement(mine))
		Expect(holds(&mariadbv1.MariaDBAccount{}, "keystone")).To(ContainElement(mine))
		rollOut(ns, "keystone", 1)
		expectConditions(key, condition{"Ready", "True", "Ready", ""})
		Eventually(func() []string { return holds(&memcachedv1.Memcached{}, "memcached") }).ShouldNot(ContainElement(mine))
		Eventually(func() []string { return holds(&mariadbv1.MariaDBAccount{}, "keystone") }).ShouldNot(ContainElement(mine))
		Expect(holds(&memcachedv1.Memcached{}, "memcached2")).To(ContainElement(mine))
		Expect(holds(&mariadbv1.MariaDBAccount{}, "keystone2")).To(ContainElement(mine))
		Expect(holds(&mariadbv1.MariaDBDatabase{}, "keystone")).To(ContainElement(mine))
	})

	It("wakes when an adopted MariaDBAccount, and then its Secret, turn ready", func() {
		acc := &mariadbv1.MariaDBAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "keystone"},
			Spec: mariadbv1.MariaDBAccountSpec{UserName: "keystone", Secret: "adopted-db", AccountType: mariadbv1.User}}
		Expect(k8sClient.Create(ctx, acc)).To(Succeed())
		api := keystoneAPI(ns)
		Expect(k8sClient.Create(ctx, api)).To(Succeed())
		key := client.ObjectKeyFromObject(api)
		createSecret(ns, "osp-secret", map[string]string{"AdminPassword": "secret-admin"})
		createMemcached(ns, "memcached")
		markMemcachedReady(ns, "memcached")
		db := &mariadbv1.MariaDBDatabase{}
		markReady(db, &db.Status.Conditions, types.NamespacedName{Namespace: ns, Name: "keystone"})
		createGaleraService(ns, galera)
		expectConditions(key, condition{"DBReady", "False", "Requested", "Info"})
		Eventually(func() string { return message(key, "DBReady") }).Should(HavePrefix("MariaDBAccount keystone"))
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(acc), acc)).To(Succeed())
		Expect(metav1.GetControllerOf(acc)).To(BeNil(), "an adopted account is not taken over")

		markReady(acc, &acc.Status.Conditions, client.ObjectKeyFromObject(acc))
		expectConditions(key, condition{"DBReady", "False", "DependencyNotFound", "Warning"})
		Eventually(func() string { return message(key, "DBReady") }).Should(ContainSubstring("secret adopted-db"))
		createSecret(ns, "adopted-db", map[string]string{mariadbv1.DatabasePasswordSelector: "db-password"})
		expectConditions(key, condition{"DBReady", "True", "Ready", ""})
	})

	It("releases its finalizers on deletion, with its dependencies present or already gone", func() {
		key := deployReady(ns)
		Expect(k8sClient.Delete(ctx, getAPI(key)(Default))).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, key, &keystonev1.KeystoneAPI{})) }).Should(BeTrue())
		mc := &memcachedv1.Memcached{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "memcached"}, mc)).To(Succeed())
		Expect(mc.Finalizers).To(BeEmpty())
		db := &mariadbv1.MariaDBDatabase{}
		err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keystone"}, db)
		if err == nil {
			Expect(db.Finalizers).NotTo(ContainElement("keystone.openstack.org/keystoneapi-keystone"))
		}

		By("a second KeystoneAPI whose memcached is already gone")
		Expect(k8sClient.Delete(ctx, mc)).To(Succeed())
		api := keystoneAPI(ns)
		api.Name = "other"
		Expect(k8sClient.Create(ctx, api)).To(Succeed())
		other := client.ObjectKeyFromObject(api)
		Eventually(func(g Gomega) { g.Expect(getAPI(other)(g).Finalizers).NotTo(BeEmpty()) }).Should(Succeed())
		Expect(k8sClient.Delete(ctx, api)).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, other, &keystonev1.KeystoneAPI{})) }).Should(BeTrue())
	})
})

// gauge reads keystone_operator_condition for one object's condition and status.
func gauge(kind, ns, name, condType, condStatus string) float64 {
	GinkgoHelper()
	series, err := testutil.ConditionSeries(metrics.Registry)
	Expect(err).NotTo(HaveOccurred())
	key := testutil.SeriesKey(kind, ns, name, condType, condStatus)
	v, ok := series[key]
	Expect(ok).To(BeTrue(), "no keystone_operator_condition series %s", key)
	return v
}

// deadlineGauge is the keystone_operator_deadline_timestamp_seconds series of an object.
func deadlineGauge(kind, ns, name, deadline string) float64 {
	GinkgoHelper()
	series, err := testutil.DeadlineSeries(metrics.Registry)
	Expect(err).NotTo(HaveOccurred())
	v, ok := series[kind+" "+ns+"/"+name+" "+deadline]
	Expect(ok).To(BeTrue(), "no deadline series %s of %s %s/%s", deadline, kind, ns, name)
	return v
}

// reconcileCount is how many reconciles controller (the lower-case kind) has run, by
// controller-runtime's counter: a "no writes" test proves with it that reconciles ran.
func reconcileCount(controller string) float64 {
	GinkgoHelper()
	families, err := metrics.Registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	total := 0.0
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == controller {
					total += m.GetCounter().GetValue()
				}
			}
		}
	}
	return total
}

// reconciledAfter runs touch and waits until controller has run a reconcile since.
func reconciledAfter(controller string, touch func()) {
	GinkgoHelper()
	before := reconcileCount(controller)
	touch()
	Eventually(func() float64 { return reconcileCount(controller) }).Should(BeNumerically(">", before), "a reconcile ran")
}

// settledWrites waits until the manager's writes in ns stop changing for longer than
// the KeystoneAPI's view of the registrations may wait to count a change
// (keystoneapi.RegistrationsViewInterval), and returns them.
func settledWrites(ns string) map[string]int64 {
	GinkgoHelper()
	quiet := keystoneapi.RegistrationsViewInterval + 300*time.Millisecond
	last := writesIn(ns)
	Eventually(func() bool {
		time.Sleep(quiet)
		now := writesIn(ns)
		same := fmt.Sprint(now) == fmt.Sprint(last)
		last = now
		return same
	}).WithTimeout(10 * quiet).Should(BeTrue())
	return last
}

// touch forces a reconcile without changing the spec.
func touch(key types.NamespacedName) {
	GinkgoHelper()
	update(key, &keystonev1.KeystoneAPI{}, touchAnnotation)
}

func updateAPI(key types.NamespacedName, mutate func(*keystonev1.KeystoneAPI)) {
	GinkgoHelper()
	update(key, &keystonev1.KeystoneAPI{}, mutate)
}

func kstatusOf(key types.NamespacedName) status.Status {
	GinkgoHelper()
	return kstatusOfObject(getAPI(key)(Default))
}

// kstatusOfObject is what kstatus (Flux and others) computes for an object.
func kstatusOfObject(obj any) status.Status {
	GinkgoHelper()
	raw, err := runtimeToUnstructured(obj)
	Expect(err).NotTo(HaveOccurred())
	res, err := status.Compute(unstructuredOf(raw))
	Expect(err).NotTo(HaveOccurred())
	return res.Status
}
