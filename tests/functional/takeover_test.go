package functional

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/applicationcredentials"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/credentials"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/tests/support/localkeystone"
	"github.com/keystone-stepwise/keystone-operator/tests/support/upstream"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	memcachedv1 "github.com/openstack-k8s-operators/infra-operator/apis/memcached/v1beta1"
	rabbitmqv1 "github.com/openstack-k8s-operators/infra-operator/apis/rabbitmq/v1beta1"
	"github.com/openstack-k8s-operators/lib-common/modules/common/util"
	mariadbv1 "github.com/openstack-k8s-operators/mariadb-operator/api/v1beta1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// What keystone-operator leaves behind, as its source (internal/controller,
// internal/keystone) writes it: its finalizer on the KeystoneAPI and on what it uses,
// the keys in the Secret "keystone" (annotation rotatedat), a Deployment selecting
// service=keystone,owner=<name>, and status.hash holding lib-common ObjectHash digests.
const upstreamFinalizer = "openstack.org/keystoneapi"

// upstreamDigest is a digest in keystone-operator's encoding (lib-common's ObjectHash).
func upstreamDigest(v any) string {
	GinkgoHelper()
	h, err := util.ObjectHash(v)
	Expect(err).NotTo(HaveOccurred())
	return h
}

// noJobs fails when db-sync or bootstrap runs.
func noJobs(ns string) func(g Gomega) {
	return func(g Gomega) {
		for _, name := range []string{"keystone-db-sync", "keystone-bootstrap"} {
			err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &batchv1.Job{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "job %s must not run", name)
		}
	}
}

// mountedKeys reads the keys a pod of the Deployment sees: the key repository files,
// by volume, as the Secret's items map them.
func mountedKeys(ns string) map[string]map[string]string {
	GinkgoHelper()
	dep := &appsv1.Deployment{}
	Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keystone"}, dep)).To(Succeed())
	out := map[string]map[string]string{}
	for _, v := range dep.Spec.Template.Spec.Volumes {
		if v.Secret == nil || (v.Name != "fernet-keys" && v.Name != "credential-keys") {
			continue
		}
		secret := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: v.Secret.SecretName}, secret)).To(Succeed())
		files := map[string]string{}
		for _, item := range v.Secret.Items {
			Expect(secret.Data).To(HaveKey(item.Key), "volume %s mounts key %s", v.Name, item.Key)
			files[item.Path] = string(secret.Data[item.Key])
		}
		out[v.Name] = files
	}
	Expect(out).To(HaveKey("fernet-keys"))
	Expect(out).To(HaveKey("credential-keys"))
	return out
}

// upstreamKeystoneAPI creates a KeystoneAPI with keystone-operator's finalizer whose
// admin password Secret does not exist yet: the operator waits at InputReady while the
// rest of keystone-operator's state is laid out (its status included).
func upstreamKeystoneAPI(ns string) (*keystonev1.KeystoneAPI, types.NamespacedName) {
	GinkgoHelper()
	api := keystoneAPI(ns)
	api.Finalizers = []string{upstreamFinalizer}
	api.Spec.Secret = "osp-secret-pending"
	Expect(k8sClient.Create(ctx, api)).To(Succeed())
	key := client.ObjectKeyFromObject(api)
	expectConditions(key, condition{"InputReady", "False", "DependencyNotFound", "Warning"})
	Expect(k8sClient.Get(ctx, key, api)).To(Succeed())
	return api, key
}

// startOn lets the operator start on what keystone-operator left: the admin password
// Secret exists and the KeystoneAPI names it. Through a change of the KeystoneAPI, so that
// no round acts on a copy read before the status keystone-operator left was written.
func startOn(key types.NamespacedName) {
	GinkgoHelper()
	createSecret(key.Namespace, "osp-secret", map[string]string{"AdminPassword": "secret-admin"})
	updateAPI(key, func(a *keystonev1.KeystoneAPI) { a.Spec.Secret = "osp-secret" })
}

var ownDigest = regexp.MustCompile(`^[0-9a-f]{64}$`)

var _ = Describe("Taking over a KeystoneAPI from keystone-operator", func() {
	It("keeps its keys, its Deployment's selector and its jobs' results, rolls once, and releases its finalizer", func() {
		ns := newNamespace()
		api, key := upstreamKeystoneAPI(ns)
		owner := metav1.NewControllerRef(api, keystonev1.GroupVersion.WithKind("KeystoneAPI"))

		rotated := time.Now().Add(-time.Hour)
		rotatedAt := rotated.UTC().Format(time.RFC3339)
		keys := upstream.KeysData(5)
		Expect(k8sClient.Create(ctx, upstream.KeysSecret(api, keys, rotated))).To(Succeed())

		mc := &memcachedv1.Memcached{ObjectMeta: metav1.ObjectMeta{Name: "memcached", Namespace: ns, Finalizers: []string{upstreamFinalizer}},
			Spec: memcachedv1.MemcachedSpec{MemcachedSpecCore: memcachedv1.MemcachedSpecCore{Replicas: ptr.To[int32](1)}}}
		Expect(k8sClient.Create(ctx, mc)).To(Succeed())
		markMemcachedReady(ns, "memcached")
		createSecret(ns, "keystone-db-secret", map[string]string{mariadbv1.DatabasePasswordSelector: "db-password"})
		Expect(k8sClient.Create(ctx, &mariadbv1.MariaDBDatabase{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Namespace: ns,
			Finalizers: []string{upstreamFinalizer}, Labels: map[string]string{"dbName": galera}},
			Spec: mariadbv1.MariaDBDatabaseSpec{Name: "keystone"}})).To(Succeed())
		Expect(k8sClient.Create(ctx, &mariadbv1.MariaDBAccount{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Namespace: ns,
			Finalizers: []string{upstreamFinalizer}, Labels: map[string]string{"mariaDBDatabaseName": "keystone"}},
			Spec: mariadbv1.MariaDBAccountSpec{UserName: "keystone", Secret: "keystone-db-secret", AccountType: mariadbv1.User}})).To(Succeed())
		markDatabaseReady(ns, galera)
		transport := &rabbitmqv1.TransportURL{ObjectMeta: metav1.ObjectMeta{Name: "keystone-keystone-transport", Namespace: ns,
			OwnerReferences: []metav1.OwnerReference{*owner}}, Spec: rabbitmqv1.TransportURLSpec{RabbitmqClusterName: "rabbitmq"}}
		Expect(k8sClient.Create(ctx, transport)).To(Succeed())
		playTransportURL(ns, transport.Name, "rabbit://default_user:rabbit-password@rabbitmq."+ns+".svc:5672/?ssl=0")

		selector := map[string]string{"service": "keystone", "owner": "keystone"}
		dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Namespace: ns, OwnerReferences: []metav1.OwnerReference{*owner}},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: selector},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: selector},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "keystone-api", Image: api.Spec.ContainerImage,
						Command: []string{"/bin/bash"}, Args: []string{"-c", "/usr/local/bin/kolla_start"}}}}}}}
		Expect(k8sClient.Create(ctx, dep)).To(Succeed())
		rollOut(ns, "keystone", 1)

		setUpstreamStatus(key, map[string]string{"public": "http://keystone-public." + ns + ".svc:5000",
			"internal": "http://keystone-internal." + ns + ".svc:5000"})

		By("the operator starts on them")
		startOn(key)
		Eventually(func(g Gomega) {
			a := getAPI(key)(g)
			g.Expect(a.Status.Conditions.IsTrue("BootstrapReady")).To(BeTrue())
		}).Should(Succeed())
		for _, job := range []string{"keystone-db-sync", "keystone-bootstrap"} {
			Eventually(func(g Gomega) {
				g.Expect(eventMessages(ns)).To(ContainElement(ContainSubstring(
					"job %s not run again: keystone-operator ran it for image %s", job, api.Spec.ContainerImage)))
			}).Should(Succeed())
		}
		noJobs(ns)(Default)
		Expect(getAPI(key)(Default).Status.Hash["dbsync"]).To(MatchRegexp(ownDigest.String()), "this suite's digest replaces keystone-operator's")

		By("the Deployment keeps its selector and rolls once, mounting the same keys")
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(dep), dep)).To(Succeed())
			g.Expect(dep.Generation).To(Equal(int64(2)))
		}).Should(Succeed())
		Expect(dep.Spec.Selector.MatchLabels).To(Equal(selector))
		// From keystone-operator's kolla-started pod to the hardened one, in that one rollout.
		api0 := dep.Spec.Template.Spec.Containers[0]
		Expect(api0.Command).To(Equal([]string{"/bin/bash", "-c", deploy.ServeCommand(deploy.HttpdCommand, deploy.ClearDrainingMarker)}))
		Expect(api0.Args).To(BeEmpty())
		Expect(api0.SecurityContext).To(Equal(deploy.RestrictedContainer()))
		Expect(dep.Spec.Template.Spec.SecurityContext).To(Equal(deploy.RestrictedPod()))
		for k, v := range selector {
			Expect(dep.Spec.Template.Labels).To(HaveKeyWithValue(k, v))
		}
		rollOut(ns, "keystone", 1)
		expectConditions(key, condition{"Ready", "True", "Ready", ""})
		mounted := mountedKeys(ns)
		for i := 0; i < 5; i++ {
			Expect(mounted["fernet-keys"][fmt.Sprint(i)]).To(Equal(string(keys[fmt.Sprintf("FernetKeys%d", i)])))
		}
		for i := 0; i < 2; i++ {
			Expect(mounted["credential-keys"][fmt.Sprint(i)]).To(Equal(string(keys[fmt.Sprintf("CredentialKeys%d", i)])))
		}
		secret := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keystone"}, secret)).To(Succeed())
		Expect(secret.Data).To(Equal(keys), "no key minted, none rotated")
		kept := &rabbitmqv1.TransportURL{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(transport), kept)).To(Succeed())
		Expect(kept.UID).To(Equal(transport.UID), "keystone-operator's TransportURL kept (its RabbitMQ user with it)")
		config := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keystone-config-data"}, config)).To(Succeed())
		Expect(string(config.Data["keystone.conf"])).To(ContainSubstring("transport_url = rabbit://default_user:rabbit-password@rabbitmq."))
		Expect(secret.Annotations).To(HaveKeyWithValue("keystone.openstack.org/rotatedat", rotatedAt))
		touch(key)
		Consistently(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(dep), dep)).To(Succeed())
			g.Expect(dep.Generation).To(Equal(int64(2)), "one rollout")
			noJobs(ns)(g)
		}, 2*time.Second).Should(Succeed())
		for _, obj := range usedObjects(ns) {
			Eventually(func(g Gomega) {
				g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
				g.Expect(obj.GetFinalizers()).NotTo(ContainElement(upstreamFinalizer), "%T", obj)
				g.Expect(obj.GetFinalizers()).To(ContainElement("keystone.openstack.org/keystoneapi-keystone"), "%T", obj)
			}).Should(Succeed())
		}

		By("deleted afterwards, nothing hangs")
		Expect(k8sClient.Delete(ctx, getAPI(key)(Default))).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, key, &keystonev1.KeystoneAPI{})) }).Should(BeTrue(),
			"keystone-operator's finalizer released")
		for _, obj := range usedObjects(ns) {
			Eventually(func(g Gomega) {
				err := k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), obj)
				if apierrors.IsNotFound(err) {
					return
				}
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(obj.GetFinalizers()).To(BeEmpty(), "%T", obj)
			}).Should(Succeed())
		}
	})

	It("runs db-sync when the image changes with the takeover", func() {
		ns := newNamespace()
		api, key := upstreamKeystoneAPI(ns)
		selector := map[string]string{"service": "keystone", "owner": "keystone"}
		Expect(k8sClient.Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Namespace: ns},
			Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: selector},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: selector},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "keystone-api", Image: "keystone:older"}}}}}})).To(Succeed())
		setUpstreamStatus(key, nil)
		startOn(key)
		createMemcached(ns, "memcached")
		markMemcachedReady(ns, "memcached")
		markDatabaseReady(ns, galera)
		playNotifications(key)
		finishJob(ns, "keystone-db-sync", true, "")
		finishJob(ns, "keystone-bootstrap", true, "")
		Eventually(func(g Gomega) {
			d := &appsv1.Deployment{}
			g.Expect(k8sClient.Get(ctx, key, d)).To(Succeed())
			g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal(api.Spec.ContainerImage))
			g.Expect(d.Spec.Selector.MatchLabels).To(Equal(selector))
		}).Should(Succeed())
		rollOut(ns, "keystone", 1)
		expectConditions(key, condition{"Ready", "True", "Ready", ""})
	})
})

// setUpstreamStatus writes status.hash as keystone-operator records it (db-sync and
// bootstrap done) and its status.apiEndpoints.
func setUpstreamStatus(key types.NamespacedName, endpoints map[string]string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		a := getAPI(key)(g)
		a.Status.Hash = map[string]string{"dbsync": upstreamDigest("db-sync job"), "bootstrap": upstreamDigest("bootstrap job")}
		a.Status.APIEndpoints = endpoints
		g.Expect(k8sClient.Status().Update(ctx, a)).To(Succeed())
	}).Should(Succeed())
}

// eventMessages lists the messages of the Events of a namespace.
func eventMessages(ns string) []string {
	GinkgoHelper()
	events := &corev1.EventList{}
	Expect(k8sClient.List(ctx, events, client.InNamespace(ns))).To(Succeed())
	var out []string
	for _, e := range events.Items {
		out = append(out, e.Message)
	}
	return out
}

// usedObjects are, by name, the objects a KeystoneAPI keystone puts its finalizer on:
// the Memcached memcached, the MariaDBDatabase and the MariaDBAccount keystone.
func usedObjects(ns string) []client.Object {
	return []client.Object{
		&memcachedv1.Memcached{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "memcached"}},
		&mariadbv1.MariaDBDatabase{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "keystone"}},
		&mariadbv1.MariaDBAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "keystone"}},
	}
}

var _ = Describe("The adoption of an existing cloud (data-plane-adoption)", func() {
	It("deploys with the Secret keystone made beforehand: every key kept, the primary still primary, none minted", func() {
		ns := newNamespace()
		// As the procedure creates it: the old controllers' key repositories, as
		// keystone-manage wrote them, copied file by file (0 is the staged key, 1 the
		// primary), no annotation.
		adopted := upstream.AdoptionSecret(ns, [2]string{upstream.KeystoneManageKey(), upstream.KeystoneManageKey()},
			[2]string{upstream.KeystoneManageKey(), upstream.KeystoneManageKey()})
		keys := adopted.Data
		Expect(k8sClient.Create(ctx, adopted)).To(Succeed())
		key := deployReady(ns)

		secret := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keystone"}, secret)).To(Succeed())
		fernet := deploy.FernetKeys(secret.Data)
		Expect(fernet).To(HaveLen(5), "padded to fernetMaxActiveKeys, as keystone-operator pads")
		Expect(fernet[0]).To(Equal(string(keys["FernetKeys0"])), "the staged key")
		Expect(fernet[4]).To(Equal(string(keys["FernetKeys1"])), "the primary key is still the primary (the highest)")
		Expect(deploy.CredentialKeys(secret.Data)).To(Equal([]string{string(keys["CredentialKeys0"]), string(keys["CredentialKeys1"])}))
		_, err := time.Parse(time.RFC3339, secret.Annotations["keystone.openstack.org/rotatedat"])
		Expect(err).NotTo(HaveOccurred(), "the rotation time is recorded, not taken as overdue")
		Expect(secret.OwnerReferences).To(BeEmpty(), "a Secret the user made stays the user's")
		mounted := mountedKeys(ns)
		Expect(mounted["fernet-keys"]["0"]).To(Equal(fernet[0]))
		Expect(mounted["fernet-keys"]["4"]).To(Equal(fernet[4]))
		expectConditions(key, condition{"FernetKeysReady", "True", "Ready", ""})

		By("deleting the KeystoneAPI keeps the adopted keys")
		Expect(k8sClient.Delete(ctx, getAPI(key)(Default))).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, key, &keystonev1.KeystoneAPI{})) }).Should(BeTrue())
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keystone"}, secret)).To(Succeed())
	})

	It("makes no credential keys up: a Secret keystone without any is reported, and nothing is deployed", func() {
		ns := newNamespace()
		keys := upstream.KeysData(2)
		delete(keys, "CredentialKeys0")
		delete(keys, "CredentialKeys1")
		Expect(k8sClient.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Namespace: ns}, Data: keys})).To(Succeed())
		key := createWithInputs(keystoneAPI(ns))
		expectConditions(key, condition{"FernetKeysReady", "False", "InvalidInput", "Error"})
		Expect(message(key, "FernetKeysReady")).To(ContainSubstring("secret keystone holds no credential key"))
		Consistently(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, key, &appsv1.Deployment{}))
		}, time.Second).Should(BeTrue())
	})

	It("mounts the credential repository as Keystone keeps it: 0, 2 and 3 after two credential_rotate runs, 3 the primary", func() {
		ns := newNamespace()
		data := map[string][]byte{}
		for _, name := range []string{"FernetKeys0", "FernetKeys1", "CredentialKeys0", "CredentialKeys2", "CredentialKeys3"} {
			data[name] = []byte(upstream.KeystoneManageKey())
		}
		Expect(k8sClient.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Namespace: ns}, Data: data})).To(Succeed())
		key := deployReady(ns)
		expectConditions(key, condition{"FernetKeysReady", "True", "Ready", ""})
		Expect(mountedKeys(ns)["credential-keys"]).To(Equal(map[string]string{"0": string(data["CredentialKeys0"]),
			"2": string(data["CredentialKeys2"]), "3": string(data["CredentialKeys3"])}), "every key, under the number Keystone reads it by")
		secret := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keystone"}, secret)).To(Succeed())
		Expect(deploy.ReadKeys(deploy.CredentialKeyPrefix, secret.Data).Keys).To(Equal([]string{string(data["CredentialKeys0"]),
			string(data["CredentialKeys2"]), string(data["CredentialKeys3"])}), "no credential key rewritten")
	})
})

var _ = Describe("This suite's former keys Secret", func() {
	It("is copied to the Secret keystone, keys and rotation time, and removed once no pod mounts it", func() {
		ns := newNamespace()
		data, err := deploy.NewKeysData(5)
		Expect(err).NotTo(HaveOccurred())
		rotatedAt := time.Now().Add(-2 * time.Hour).UTC().Format(time.RFC3339)
		Expect(k8sClient.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "keystone-keys", Namespace: ns,
			Annotations: map[string]string{"keystone.openstack.org/fernet-rotated-at": rotatedAt}}, Data: data})).To(Succeed())
		deployReady(ns)
		secret := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keystone"}, secret)).To(Succeed())
		Expect(secret.Data).To(Equal(data))
		Expect(secret.Annotations).To(HaveKeyWithValue("keystone.openstack.org/rotatedat", rotatedAt))
		Expect(controllerutil.HasControllerReference(secret)).To(BeTrue())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keystone-keys"}, &corev1.Secret{}))
		}).Should(BeTrue())
	})
})

var _ = Describe("An override URL without a host yet", func() {
	It("is accepted and waited for, as openstack-operator writes it before its Route has a host", func() {
		ns := newNamespace()
		key := deployReady(ns)
		dep := &appsv1.Deployment{}
		Expect(k8sClient.Get(ctx, key, dep)).To(Succeed())
		generation := dep.Generation
		updateAPI(key, func(a *keystonev1.KeystoneAPI) {
			a.Spec.Override.Service = &keystonev1.ServiceOverrides{Public: &keystonev1.EndpointOverride{EndpointURL: ptr.To("http://")}}
		})
		expectConditions(key, condition{"Ready", "False", "Requested", "Info"}, condition{"InputReady", "False", "Requested", "Info"})
		Expect(message(key, "InputReady")).To(ContainSubstring(`waiting for a host in override.service.public.endpointURL "http://"`))
		Expect(k8sClient.Get(ctx, key, dep)).To(Succeed())
		Expect(dep.Generation).To(Equal(generation), "the pods keep running as they were")
		updateAPI(key, func(a *keystonev1.KeystoneAPI) { a.Spec.Override.Service = nil })
		expectConditions(key, condition{"Ready", "True", "Ready", ""})
	})
})

var _ = Describe("The adoption of an existing cloud, against the real Keystone", Label("real-keystone"), func() {
	It("keeps the cloud's tokens valid and its credentials readable with the keys the pods mount", func() {
		st := realKeystone()
		kc := adminClient(st.Keystone.URL())
		bg := context.Background()
		user, err := tokens.Get(bg, kc, kc.Token()).ExtractUser()
		Expect(err).NotTo(HaveOccurred())
		By("the cloud before the switch: a token, and a credential Keystone encrypted with its credential keys")
		oldToken := adminClient(st.Keystone.URL()).Token()
		cred, err := credentials.Create(bg, kc, credentials.CreateOpts{Type: "cert", UserID: user.ID, Blob: "adopted-cloud-credential"}).Extract()
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { _ = credentials.Delete(bg, kc, cred.ID).ExtractErr() })
		fernetDir, credentialDir := st.FernetDir, st.CredentialDir()
		fernet, credential := readRepository(fernetDir), readRepository(credentialDir)
		Expect(len(fernet)).To(BeNumerically(">=", 2))

		By("the procedure's Secret: the staged and the primary key, and the credential keys, copied file by file")
		ns := newNamespace()
		Expect(k8sClient.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Namespace: ns},
			StringData: map[string]string{"FernetKeys0": fernet[0], "FernetKeys1": fernet[len(fernet)-1],
				"CredentialKeys0": credential[0], "CredentialKeys1": credential[1]}})).To(Succeed())
		deployReady(ns)
		mounted := mountedKeys(ns)

		serve := func(fernetKeys, credentialKeys []string) {
			GinkgoHelper()
			Expect(localkeystone.WriteKeyRepository(fernetDir, fernetKeys)).To(Succeed())
			Expect(localkeystone.WriteKeyRepository(credentialDir, credentialKeys)).To(Succeed())
			// Keystone caches validated tokens and read credentials in memcached: emptied,
			// so that it decrypts them with the repositories it now has.
			Expect(st.Memcached.FlushAll()).To(Succeed())
		}
		// Restored whatever happens: the other specs use this Keystone.
		DeferCleanup(func() { serve(fernet, credential) })

		By("Keystone serving the keys the pods mount")
		serve(repository(mounted["fernet-keys"]), repository(mounted["credential-keys"]))
		fresh := adminClient(st.Keystone.URL())
		_, err = tokens.Get(bg, fresh, oldToken).Extract()
		Expect(err).NotTo(HaveOccurred(), "a token issued before the switch validates after it")
		got, err := credentials.Get(bg, fresh, cred.ID).Extract()
		Expect(err).NotTo(HaveOccurred(), "a credential encrypted before the switch decrypts after it")
		Expect(got.Blob).To(Equal("adopted-cloud-credential"))

		By("the same checks fail with keys the cloud never had (what minting new keys did)")
		minted, err := deploy.NewKeysData(5)
		Expect(err).NotTo(HaveOccurred())
		serve(deploy.FernetKeys(minted), deploy.CredentialKeys(minted))
		// The admin authenticates anew: its own token was signed with the old keys too.
		other := adminClient(st.Keystone.URL())
		_, err = tokens.Get(bg, other, oldToken).Extract()
		Expect(err).To(HaveOccurred(), "Keystone does not recognise the token")
		_, err = credentials.Get(bg, other, cred.ID).Extract()
		Expect(err).To(HaveOccurred(), "Keystone cannot decrypt the credential")
	})
})

var _ = Describe("Taking over keystone-operator's keys, against the real Keystone", Label("real-keystone"), func() {
	It("keeps a token and a credential Keystone made with them valid and readable: standard base64, three credential keys", func() {
		st := realKeystone()
		url := st.Keystone.URL()
		bg := context.Background()
		fernetDir, credentialDir := st.FernetDir, st.CredentialDir()
		fernet, credential := readRepository(fernetDir), readRepository(credentialDir)
		serve := func(fernetFiles, credentialFiles map[string]string) {
			GinkgoHelper()
			Expect(localkeystone.WriteKeyFiles(fernetDir, fernetFiles)).To(Succeed())
			Expect(localkeystone.WriteKeyFiles(credentialDir, credentialFiles)).To(Succeed())
			// Keystone caches validated tokens and read credentials in memcached.
			Expect(st.Memcached.FlushAll()).To(Succeed())
		}
		// Restored whatever happens: the other specs use this Keystone.
		DeferCleanup(func() {
			Expect(localkeystone.WriteKeyRepository(fernetDir, fernet)).To(Succeed())
			Expect(localkeystone.WriteKeyRepository(credentialDir, credential)).To(Succeed())
			Expect(st.Memcached.FlushAll()).To(Succeed())
		})

		By("Keystone serving keystone-operator's keys: standard base64, and the credential repository one credential_rotate leaves (0, 1, 2; 2 the primary)")
		keys := upstream.KeysData(5)
		// The primaries, which encrypt, hold "+" or "/": the alphabet a url-safe check refuses.
		for _, primary := range []string{"FernetKeys4", "CredentialKeys2"} {
			for !strings.ContainsAny(string(keys[primary]), "+/") {
				keys[primary] = []byte(upstream.FernetKey())
			}
		}
		files := func(prefix string, n int) map[string]string {
			out := map[string]string{}
			for i := range n {
				out[fmt.Sprint(i)] = string(keys[fmt.Sprintf("%s%d", prefix, i)])
			}
			return out
		}
		serve(files("FernetKeys", 5), files("CredentialKeys", 3))
		kc := adminClient(url)
		oldToken := kc.Token()
		user, err := tokens.Get(bg, kc, oldToken).ExtractUser()
		Expect(err).NotTo(HaveOccurred())
		cred, err := credentials.Create(bg, kc, credentials.CreateOpts{Type: "cert", UserID: user.ID, Blob: "keystone-operator-era"}).Extract()
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { _ = credentials.Delete(bg, adminClient(url), cred.ID).ExtractErr() })

		By("keystone-operator's KeystoneAPI and its Secret keystone, taken over")
		ns := newNamespace()
		api, key := upstreamKeystoneAPI(ns)
		Expect(k8sClient.Create(ctx, upstream.KeysSecret(api, keys, time.Now()))).To(Succeed())
		startOn(key)
		createMemcached(ns, "memcached")
		markMemcachedReady(ns, "memcached")
		markDatabaseReady(ns, galera)
		playNotifications(key)
		finishRollout(key, 1)
		mounted := mountedKeys(ns)
		Expect(mounted["credential-keys"]).To(HaveLen(3), "every credential key mounted")

		By("Keystone serving the keys the pods mount: the token validates, the credential decrypts")
		serve(mounted["fernet-keys"], mounted["credential-keys"])
		fresh := adminClient(url)
		_, err = tokens.Get(bg, fresh, oldToken).Extract()
		Expect(err).NotTo(HaveOccurred(), "a token issued before the takeover validates after it")
		got, err := credentials.Get(bg, fresh, cred.ID).Extract()
		Expect(err).NotTo(HaveOccurred(), "a credential encrypted with key 2 before the takeover decrypts after it")
		Expect(got.Blob).To(Equal("keystone-operator-era"))

		By("without key 2 (what mounting CredentialKeys0 and 1 alone gave) it does not")
		withoutPrimary := maps.Clone(mounted["credential-keys"])
		delete(withoutPrimary, "2")
		serve(mounted["fernet-keys"], withoutPrimary)
		_, err = credentials.Get(bg, adminClient(url), cred.ID).Extract()
		Expect(err).To(HaveOccurred(), "Keystone cannot decrypt the credential")
	})
})

// readRepository reads a key repository's files 0..n-1.
func readRepository(dir string) []string {
	GinkgoHelper()
	var keys []string
	for i := 0; ; i++ {
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprint(i)))
		if os.IsNotExist(err) {
			return keys
		}
		Expect(err).NotTo(HaveOccurred())
		keys = append(keys, string(b))
	}
}

// repository orders mounted files "0".."n-1" as a key repository.
func repository(files map[string]string) []string {
	keys := make([]string, len(files))
	for i := range keys {
		keys[i] = files[fmt.Sprint(i)]
	}
	return keys
}

// upstreamCredential plays keystone-operator having made an application credential for
// svc's user, its Secret (no user recorded on it: keystone-operator records none) and the
// KeystoneApplicationCredential's status; the operator then starts on them, and is Ready
// with the same credential. It returns the object's key, the credential and its Secret's name.
func upstreamCredential(ns, url string, svc *keystonev1.KeystoneService) (client.ObjectKey, *applicationcredentials.ApplicationCredential, string) {
	GinkgoHelper()
	By("keystone-operator made the credential as the user, and its Secret")
	bg := context.Background()
	provider, err := openstack.AuthenticatedClient(bg, gophercloud.AuthOptions{IdentityEndpoint: url + "/v3/",
		Username: svc.Spec.ServiceUser, Password: "ac-user-pw", DomainName: "Default",
		Scope: &gophercloud.AuthScope{ProjectName: "service", DomainName: "Default"}})
	Expect(err).NotTo(HaveOccurred())
	userClient := &gophercloud.ServiceClient{ProviderClient: provider, Endpoint: url + "/v3/", Type: "identity"}
	userID, err := tokens.Get(bg, userClient, provider.Token()).ExtractUser()
	Expect(err).NotTo(HaveOccurred())
	expires := time.Now().Add(365 * 24 * time.Hour).UTC().Truncate(time.Second)
	made, err := applicationcredentials.Create(bg, userClient, userID.ID, applicationcredentials.CreateOpts{
		Name: "ac-glance-x7k2q", Roles: []applicationcredentials.Role{{Name: "service"}}, ExpiresAt: &expires}).Extract()
	Expect(err).NotTo(HaveOccurred())

	ac := applicationCredential(ns)
	ac.Spec.UserName = svc.Spec.ServiceUser
	// Its password Secret comes last: the operator waits at InputReady meanwhile.
	ac.Spec.Secret, ac.Spec.PasswordSelector = "ac-user-pending", "ServicePassword"
	ac.Finalizers = []string{"openstack.org/applicationcredential"}
	Expect(k8sClient.Create(ctx, ac)).To(Succeed())
	key := client.ObjectKeyFromObject(ac)
	expectAppCredConditions(key, condition{"InputReady", "False", "DependencyNotFound", "Warning"})
	Expect(k8sClient.Get(ctx, key, ac)).To(Succeed())
	secretName := "ac-glance-" + strings.ToLower(made.ID[:5]) + "-secret"
	// Without labels, as an earlier keystone-operator wrote it (later ones add the
	// service label to it): found through the status alone.
	Expect(k8sClient.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secretName, Namespace: ns,
		Finalizers:      []string{"openstack.org/ac-secret-protection"},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ac, keystonev1.GroupVersion.WithKind("KeystoneApplicationCredential"))}},
		StringData: map[string]string{"AC_ID": made.ID, "AC_SECRET": made.Secret}})).To(Succeed())
	Eventually(func(g Gomega) {
		a := getAppCred(key)(g)
		now := metav1.NewTime(time.Now().UTC().Truncate(time.Second))
		a.Status.ACID, a.Status.SecretName = made.ID, secretName
		a.Status.SecurityHash = upstreamDigest(struct {
			Roles        []string
			AccessRules  []keystonev1.ACRule
			Unrestricted bool
		}{a.Spec.Roles, a.Spec.AccessRules, a.Spec.Unrestricted})
		a.Status.CreatedAt, a.Status.ExpiresAt = &now, &metav1.Time{Time: expires}
		a.Status.RotationEligibleAt = &metav1.Time{Time: expires.Add(-time.Duration(a.Spec.GracePeriodDays) * 24 * time.Hour)}
		g.Expect(k8sClient.Status().Update(ctx, a)).To(Succeed())
	}).Should(Succeed())

	By("the operator starts on them")
	// Through a change of the credential, so that no round acts on a copy read before
	// its status was written.
	createSecret(ns, "ac-user", map[string]string{"ServicePassword": "ac-user-pw"})
	update(key, &keystonev1.KeystoneApplicationCredential{}, func(a *keystonev1.KeystoneApplicationCredential) {
		a.Spec.Secret = "ac-user"
	})
	expectAppCredConditions(key, condition{"Ready", "True", "Ready", ""})
	Consistently(func(g Gomega) {
		st := getAppCred(key)(g).Status
		g.Expect(st.ACID).To(Equal(made.ID), "the same credential")
		g.Expect(st.SecretName).To(Equal(secretName))
	}, 2*time.Second).Should(Succeed())
	Expect(canUseAppCred(url, made.ID, made.Secret)).To(BeTrue(), "the credential still authenticates")
	return key, made, secretName
}

// appCredsOf lists the IDs of a user's application credentials, read by the admin.
func appCredsOf(url, userID string) []string {
	GinkgoHelper()
	pages, err := applicationcredentials.List(adminClient(url), userID, applicationcredentials.ListOpts{}).AllPages(context.Background())
	Expect(err).NotTo(HaveOccurred())
	all, err := applicationcredentials.ExtractApplicationCredentials(pages)
	Expect(err).NotTo(HaveOccurred())
	ids := []string{}
	for _, ac := range all {
		ids = append(ids, ac.ID)
	}
	return ids
}

var _ = Describe("Taking over an application credential from keystone-operator, against the real Keystone", Label("real-keystone"), func() {
	It("keeps the credential and its Secret: the same ID authenticates, nothing new is minted, deletion revokes it", func() {
		stack := realKeystone()
		url := stack.Keystone.URL()
		ns := newNamespace()
		svc := realCredentialUser(ns, url)
		key, made, _ := upstreamCredential(ns, url, svc)
		Expect(appCredsOf(url, userIDOf(url, svc.Spec.ServiceUser))).To(HaveLen(1), "nothing new minted")

		By("deleted afterwards: keystone-operator's finalizers released, the credential revoked")
		Expect(k8sClient.Delete(ctx, getAppCred(key)(Default))).To(Succeed())
		Eventually(gone(key, &keystonev1.KeystoneApplicationCredential{})).Should(BeTrue())
		Eventually(func() bool { return canUseAppCred(url, made.ID, made.Secret) }, 20*time.Second).Should(BeFalse())
	})

	It("replaces it at a change of userName, and revokes it as its own user's: it never stays valid", func() {
		stack := realKeystone()
		url := stack.Keystone.URL()
		ns := newNamespace()
		svc := realCredentialUser(ns, url)
		key, made, secretName := upstreamCredential(ns, url, svc)

		By("another user, with the same roles (admin among them: it may read the first user's credentials)")
		other := keystoneService(ns)
		other.Name, other.Spec.ServiceName, other.Spec.ServiceType = "other", "other", ns+"-other"
		other.Spec.ServiceUser, other.Spec.PasswordSelector = ns+"-other", "ServicePassword"
		Expect(k8sClient.Create(ctx, other)).To(Succeed())
		expectServiceConditions(client.ObjectKeyFromObject(other), condition{"Ready", "True", "Ready", ""})
		update(key, &keystonev1.KeystoneApplicationCredential{}, func(a *keystonev1.KeystoneApplicationCredential) {
			a.Spec.UserName, a.Spec.Secret = other.Spec.ServiceUser, "osp-secret"
		})
		Eventually(func(g Gomega) { g.Expect(getAppCred(key)(g).Status.ACID).NotTo(Equal(made.ID)) }).Should(Succeed(), "replaced")
		expectAppCredConditions(key, condition{"Ready", "True", "Ready", ""})
		current := getAppCred(key)(Default).Status.ACID
		Expect(appCredsOf(url, userIDOf(url, other.Spec.ServiceUser))).To(ConsistOf(current), "the new one is the other user's")
		Eventually(func() []string { return appCredsOf(url, userIDOf(url, svc.Spec.ServiceUser)) }).Should(BeEmpty(),
			"the first user's credential is revoked")
		Expect(canUseAppCred(url, made.ID, made.Secret)).To(BeFalse())
		Eventually(gone(types.NamespacedName{Namespace: ns, Name: secretName}, &corev1.Secret{})).Should(BeTrue())
	})
})
