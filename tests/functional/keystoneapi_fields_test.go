package functional

import (
	"encoding/json"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/tests/support/fakekeystone"
	"github.com/keystone-stepwise/keystone-operator/tests/support/testutil"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rabbitmqv1 "github.com/openstack-k8s-operators/infra-operator/apis/rabbitmq/v1beta1"
	topologyv1 "github.com/openstack-k8s-operators/infra-operator/apis/topology/v1beta1"
	"github.com/openstack-k8s-operators/lib-common/modules/common/service"
	"github.com/openstack-k8s-operators/lib-common/modules/storage"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The fields of keystone-operator's KeystoneAPI that openstack-operator fills: each
// changes what runs, with its step forward and back.

func withTLS(a *keystonev1.KeystoneAPI) {
	a.Spec.TLS.API.Public.SecretName = ptr.To("cert-keystone-public-svc")
	a.Spec.TLS.API.Internal.SecretName = ptr.To("cert-keystone-internal-svc")
	a.Spec.TLS.CaBundleSecretName = "combined-ca-bundle"
}

// createWithoutDatabase creates api with its admin Secret and a ready Memcached; its
// database is played ready by the spec once the steps before it are True.
func createWithoutDatabase(api *keystonev1.KeystoneAPI) types.NamespacedName {
	GinkgoHelper()
	Expect(k8sClient.Create(ctx, api)).To(Succeed())
	createSecret(api.Namespace, "osp-secret", map[string]string{"AdminPassword": "secret-admin"})
	createMemcached(api.Namespace, "memcached")
	markMemcachedReady(api.Namespace, "memcached")
	return client.ObjectKeyFromObject(api)
}

func podTemplate(key types.NamespacedName) func(g Gomega) corev1.PodTemplateSpec {
	return func(g Gomega) corev1.PodTemplateSpec {
		dep := &appsv1.Deployment{}
		g.Expect(k8sClient.Get(ctx, key, dep)).To(Succeed())
		return dep.Spec.Template
	}
}

var _ = Describe("KeystoneAPI with TLS", func() {
	var ns string
	var ca *testutil.CA
	BeforeEach(func() {
		ns = newNamespace()
		var err error
		ca, err = testutil.NewCA("rootca-internal")
		Expect(err).NotTo(HaveOccurred())
	})

	It("waits for its certificates, refuses a bad one, serves HTTPS, and rolls the pods on renewal", func() {
		api := keystoneAPI(ns)
		withTLS(api)
		api.Spec.PreserveJobs = true
		key := createWithoutDatabase(api)
		By("the certificate Secrets missing")
		expectConditions(key,
			condition{"Ready", "False", "DependencyNotFound", "Warning"},
			condition{"TLSInputReady", "False", "DependencyNotFound", "Warning"})
		Expect(message(key, "TLSInputReady")).To(Equal("secret combined-ca-bundle not found"))

		By("a CA bundle that is not PEM")
		createSecret(ns, "combined-ca-bundle", map[string]string{"tls-ca-bundle.pem": "not a certificate"})
		expectConditions(key, condition{"TLSInputReady", "False", "InvalidCertificate", "Warning"})
		Expect(message(key, "TLSInputReady")).To(ContainSubstring("CA bundle secret combined-ca-bundle, key tls-ca-bundle.pem: no PEM certificate"))
		setSecretKey(ns, "combined-ca-bundle", "tls-ca-bundle.pem", string(ca.PEM))

		By("a key that does not match its certificate")
		other, err := testutil.NewCA("other")
		Expect(err).NotTo(HaveOccurred())
		cert, _, err := ca.Issue("keystone-public." + ns + ".svc")
		Expect(err).NotTo(HaveOccurred())
		_, wrongKey, err := other.Issue("keystone-public." + ns + ".svc")
		Expect(err).NotTo(HaveOccurred())
		internalCert, internalKey, err := ca.Issue("keystone-internal." + ns + ".svc")
		Expect(err).NotTo(HaveOccurred())
		createSecret(ns, "cert-keystone-internal-svc", map[string]string{"tls.crt": string(internalCert), "tls.key": string(internalKey)})
		expectConditions(key, condition{"TLSInputReady", "False", "DependencyNotFound", "Warning"})
		Expect(message(key, "TLSInputReady")).To(Equal("secret cert-keystone-public-svc not found"))
		createSecret(ns, "cert-keystone-public-svc", map[string]string{"tls.crt": string(cert), "tls.key": string(wrongKey)})
		expectConditions(key, condition{"TLSInputReady", "False", "InvalidCertificate", "Warning"})
		Expect(message(key, "TLSInputReady")).To(ContainSubstring("certificate secret cert-keystone-public-svc of the public interface: tls: private key does not match public key"))

		By("valid certificates: the rollout goes on, over HTTPS")
		publicCert, publicKey, err := ca.Issue("keystone-public." + ns + ".svc")
		Expect(err).NotTo(HaveOccurred())
		setSecretKey(ns, "cert-keystone-public-svc", "tls.key", string(publicKey))
		setSecretKey(ns, "cert-keystone-public-svc", "tls.crt", string(publicCert))
		expectConditions(key, condition{"TLSInputReady", "True", "Ready", ""})
		markDatabaseReady(ns, galera)
		playNotifications(key)
		finishRollout(key, 1)
		Expect(message(key, "TLSInputReady")).To(MatchRegexp(`^CA bundle combined-ca-bundle \(1 certificates\), public certificate cert-keystone-public-svc \(valid until \d{4}-\d\d-\d\d\), internal certificate cert-keystone-internal-svc`))
		Expect(getAPI(key)(Default).Status.APIEndpoints).To(Equal(map[string]string{
			"public": "https://keystone-public." + ns + ".svc:5000", "internal": "https://keystone-internal." + ns + ".svc:5000"}))
		boot := &batchv1.Job{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keystone-bootstrap"}, boot)).To(Succeed())
		Expect(boot.Spec.Template.Spec.Containers[0].Command[2]).To(ContainSubstring("--bootstrap-public-url 'https://keystone-public." + ns + ".svc:5000'"))
		pod := podTemplate(key)(Default)
		Expect(pod.Spec.Volumes).To(ContainElements(HaveField("Name", "public-tls-certs"), HaveField("Name", "internal-tls-certs"),
			HaveField("Name", "combined-ca-bundle")))
		Expect(pod.Spec.Containers[0].ReadinessProbe.HTTPGet.Scheme).To(Equal(corev1.URISchemeHTTPS))
		config := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keystone-config-data"}, config)).To(Succeed())
		Expect(string(config.Data["httpd.conf"])).To(ContainSubstring(`SSLCertificateFile "/var/lib/config-data/tls/certs/public.crt"`))

		By("a renewed certificate rolls the pods")
		before := pod.Annotations[deploy.HashAnnotation]
		renewed, renewedKey, err := ca.Issue("keystone-internal." + ns + ".svc")
		Expect(err).NotTo(HaveOccurred())
		update(types.NamespacedName{Namespace: ns, Name: "cert-keystone-internal-svc"}, &corev1.Secret{}, func(s *corev1.Secret) {
			s.Data["tls.crt"], s.Data["tls.key"] = renewed, renewedKey
		})
		Eventually(func(g Gomega) {
			g.Expect(podTemplate(key)(g).Annotations[deploy.HashAnnotation]).NotTo(Equal(before))
		}).Should(Succeed())

		By("the certificate Secret deleted: the step goes back, the pods keep serving")
		Expect(k8sClient.Delete(ctx, &corev1.Secret{ObjectMeta: metaOf(ns, "cert-keystone-internal-svc")})).To(Succeed())
		expectConditions(key, condition{"Ready", "False", "DependencyNotFound", "Warning"},
			condition{"TLSInputReady", "False", "DependencyNotFound", "Warning"})
		Expect(podTemplate(key)(Default).Spec.Volumes).To(ContainElement(HaveField("Name", "internal-tls-certs")))
	})

	It("refuses a certificate on one interface only: httpd serves both on one port", func() {
		key := createWithoutDatabase(func() *keystonev1.KeystoneAPI {
			api := keystoneAPI(ns)
			api.Spec.TLS.API.Public.SecretName = ptr.To("cert-keystone-public-svc")
			return api
		}())
		expectConditions(key, condition{"TLSInputReady", "False", "InvalidInput", "Error"}, condition{"Stalled", "True", "InvalidInput", ""})
		Expect(message(key, "TLSInputReady")).To(ContainSubstring("both interfaces are served on port 5000, so both need a certificate or neither"))
	})

	// tlsKeystone makes an external KeystoneAPI at a fake Keystone over HTTPS whose CA the
	// bundle lacks, checks the certificate is refused, adds the CA, and registers glance.
	tlsKeystone := func() (*fakekeystone.Server, *keystonev1.KeystoneAPI, *keystonev1.KeystoneService) {
		GinkgoHelper()
		ks := fakekeystone.NewTLS("admin", "secret-admin")
		DeferCleanup(ks.Close)
		api := externalKeystoneAPI(ns)
		api.Spec.Override.Service.Internal.EndpointURL = ptr.To(ks.URL)
		api.Spec.TLS.CaBundleSecretName = "combined-ca-bundle"
		Expect(k8sClient.Create(ctx, api)).To(Succeed())
		key := client.ObjectKeyFromObject(api)
		createSecret(ns, "osp-secret", map[string]string{"AdminPassword": "secret-admin", "GlancePassword": "glance-pw"})
		createSecret(ns, "combined-ca-bundle", map[string]string{"tls-ca-bundle.pem": string(ca.PEM)})
		By("a bundle without Keystone's CA: the certificate is refused, never skipped")
		expectConditions(key, condition{"TLSInputReady", "True", "Ready", ""},
			condition{"KeystoneEndpointReady", "False", "ServiceUnavailable", "Warning"})
		Expect(message(key, "KeystoneEndpointReady")).To(ContainSubstring("certificate signed by unknown authority"))
		By("Keystone's CA in the bundle")
		setSecretKey(ns, "combined-ca-bundle", "tls-ca-bundle.pem", string(ca.PEM)+string(ks.CAPEM()))
		expectConditions(key, condition{"Ready", "True", "Ready", ""})
		svc := keystoneService(ns)
		Expect(k8sClient.Create(ctx, svc)).To(Succeed())
		expectServiceConditions(client.ObjectKeyFromObject(svc), condition{"Ready", "True", "Ready", ""})
		Expect(ks.List(fakekeystone.Services, map[string]any{"type": svc.Spec.ServiceType})).To(HaveLen(1))
		return ks, api, svc
	}

	It("reaches an external Keystone over HTTPS with the CA bundle alone, and registers a service there", func() {
		ks, api, svc := tlsKeystone()
		key := client.ObjectKeyFromObject(api)
		ep := keystoneEndpoint(ns)
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(getEndpoint(client.ObjectKeyFromObject(ep))(g).Status.Conditions.Get("Ready")).To(HaveField("Status", corev1.ConditionTrue))
		}).Should(Succeed())

		By("the namespace goes at once, its CA bundle and admin Secret first: the registrations still leave Keystone")
		for _, obj := range []client.Object{
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "combined-ca-bundle"}},
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "osp-secret"}},
			getAPI(key)(Default), getEndpoint(client.ObjectKeyFromObject(ep))(Default), getService(client.ObjectKeyFromObject(svc))(Default),
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "keystone-cleanup-credentials"}},
		} {
			Expect(k8sClient.Delete(ctx, obj)).To(Succeed())
		}
		for _, obj := range []client.Object{ep, svc, api} {
			Eventually(func() bool {
				return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), obj))
			}).Should(BeTrue(), "%T %s is gone", obj, obj.GetName())
		}
		Expect(ks.List(fakekeystone.Services, nil)).To(BeEmpty())
		Expect(ks.List(fakekeystone.Endpoints, nil)).To(BeEmpty())
		Expect(ks.List(fakekeystone.Users, map[string]any{"name": svc.Spec.ServiceUser})).To(BeEmpty())
	})
	It("gives a deletion up, annotated, once Keystone has been unreachable for the grace, with the CA bundle and its copy gone", func() {
		ks, _, svc := tlsKeystone()
		svcKey := client.ObjectKeyFromObject(svc)
		serviceID := getService(svcKey)(Default).Status.ServiceID
		By("Keystone gone; the CA bundle deleted, and the KeystoneAPI's copy of it removed by hand")
		ks.Close()
		Expect(k8sClient.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "combined-ca-bundle"}})).To(Succeed())
		update(types.NamespacedName{Namespace: ns, Name: "keystone-cleanup-credentials"}, &corev1.Secret{}, func(s *corev1.Secret) {
			delete(s.Data, "CABundle")
		})
		Expect(k8sClient.Delete(ctx, getService(svcKey)(Default))).To(Succeed())
		Eventually(func(g Gomega) {
			c := getService(svcKey)(g).Status.Conditions.Get("KeystoneServiceReady")
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(BeEquivalentTo("DependencyNotFound"))
			g.Expect(c.Message).To(ContainSubstring("deleting: the CA bundle secret combined-ca-bundle of KeystoneAPI keystone not found"))
			g.Expect(c.Message).To(ContainSubstring("annotate this object keystone.openstack.org/orphan-on-delete=true"))
		}).Should(Succeed())
		testClock.Advance(6 * time.Minute)
		// The operator's clock is shared by every spec: set back afterwards.
		DeferCleanup(func() { testClock.Advance(-(6 * time.Minute)) })
		update(svcKey, &keystonev1.KeystoneService{}, func(s *keystonev1.KeystoneService) {
			s.Annotations = map[string]string{"keystone.openstack.org/orphan-on-delete": "true"}
		})
		Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, svcKey, &keystonev1.KeystoneService{})) }, 30*time.Second).Should(BeTrue())
		Eventually(func() []string { return eventMessages(ns) }).Should(ContainElement(And(
			ContainSubstring("service glance (image) "+serviceID+" and user glance left valid in Keystone"),
			ContainSubstring("the CA bundle secret combined-ca-bundle of KeystoneAPI keystone not found"))))
	})
})

var _ = Describe("KeystoneAPI override.service", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("exposes the internal interface as a LoadBalancer with MetalLB's annotations, and takes back what the override drops", func() {
		key := deployReady(ns)
		internal := types.NamespacedName{Namespace: ns, Name: "keystone-internal"}
		getSvc := func(g Gomega) *corev1.Service {
			svc := &corev1.Service{}
			g.Expect(k8sClient.Get(ctx, internal, svc)).To(Succeed())
			return svc
		}
		By("an admin's own label on the Service, which the operator keeps")
		update(internal, &corev1.Service{}, func(s *corev1.Service) { s.Labels["team"] = "identity" })
		updateAPI(key, func(a *keystonev1.KeystoneAPI) {
			a.Spec.Override.Service = &keystonev1.ServiceOverrides{Internal: &keystonev1.EndpointOverride{OverrideSpec: service.OverrideSpec{
				EmbeddedLabelsAnnotations: &service.EmbeddedLabelsAnnotations{
					Labels:      map[string]string{"metallb": "internalapi"},
					Annotations: map[string]string{"metallb.universe.tf/address-pool": "internalapi", "metallb.universe.tf/loadBalancerIPs": "172.17.0.80"},
				},
				Spec: &service.OverrideServiceSpec{Type: corev1.ServiceTypeLoadBalancer},
			}}}
		})
		Eventually(func(g Gomega) {
			svc := getSvc(g)
			g.Expect(svc.Spec.Type).To(Equal(corev1.ServiceTypeLoadBalancer))
			g.Expect(svc.Labels).To(HaveKeyWithValue("metallb", "internalapi"))
			g.Expect(svc.Annotations).To(HaveKeyWithValue("metallb.universe.tf/loadBalancerIPs", "172.17.0.80"))
			g.Expect(svc.Annotations).To(HaveKeyWithValue("dnsmasq.network.openstack.org/hostname", "keystone-internal."+ns+".svc"))
		}).Should(Succeed())
		expectConditions(key, condition{"ExposeServiceReady", "False", "Requested", "Info"})
		Expect(message(key, "ExposeServiceReady")).To(Equal("LoadBalancer service keystone-internal has no address yet"))

		By("MetalLB gives it its address")
		svc := getSvc(Default)
		svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "172.17.0.80"}}
		Expect(k8sClient.Status().Update(ctx, svc)).To(Succeed())
		expectConditions(key, condition{"Ready", "True", "Ready", ""}, condition{"ExposeServiceReady", "True", "Ready", ""})

		By("the override removed: a ClusterIP again, without the override's labels and annotations, the admin's label kept")
		updateAPI(key, func(a *keystonev1.KeystoneAPI) { a.Spec.Override.Service = nil })
		Eventually(func(g Gomega) {
			svc := getSvc(g)
			g.Expect(svc.Spec.Type).To(Equal(corev1.ServiceTypeClusterIP))
			g.Expect(svc.Labels).NotTo(HaveKey("metallb"))
			g.Expect(svc.Labels).To(HaveKeyWithValue("team", "identity"))
			g.Expect(svc.Annotations).NotTo(HaveKey("metallb.universe.tf/loadBalancerIPs"))
			g.Expect(svc.Annotations).NotTo(HaveKey("dnsmasq.network.openstack.org/hostname"))
			var applied map[string][]string
			g.Expect(json.Unmarshal([]byte(svc.Annotations["keystone.openstack.org/override-applied"]), &applied)).To(Succeed())
			g.Expect(applied["labels"]).NotTo(ContainElement("metallb"))
		}).Should(Succeed())
		expectConditions(key, condition{"Ready", "True", "Ready", ""})
	})
})

var _ = Describe("KeystoneAPI trust flush, httpd and policy fields", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("runs keystone-manage trust_flush from a CronJob that follows the spec", func() {
		key := deployReady(ns)
		cronKey := types.NamespacedName{Namespace: ns, Name: "keystone-cron"}
		cron := &batchv1.CronJob{}
		Expect(k8sClient.Get(ctx, cronKey, cron)).To(Succeed())
		Expect(cron.Spec.Schedule).To(Equal("1 * * * *"))
		Expect(cron.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Command[2]).To(HaveSuffix(" trust_flush"))
		Expect(message(key, "CronJobReady")).To(Equal(`cronjob keystone-cron runs keystone-manage trust_flush on schedule "1 * * * *"`))
		updateAPI(key, func(a *keystonev1.KeystoneAPI) {
			a.Spec.TrustFlushSchedule, a.Spec.TrustFlushArgs, a.Spec.TrustFlushSuspend = "*/5 * * * *", "--date 2025-01-01T00:00:00", true
		})
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, cronKey, cron)).To(Succeed())
			g.Expect(cron.Spec.Schedule).To(Equal("*/5 * * * *"))
			g.Expect(cron.Spec.Suspend).To(HaveValue(BeTrue()))
			g.Expect(cron.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Command[2]).To(HaveSuffix(" trust_flush '--date' '2025-01-01T00:00:00'"))
		}).Should(Succeed())
		expectConditions(key, condition{"Ready", "True", "Ready", ""}, condition{"CronJobReady", "True", "Ready", ""})
		Expect(message(key, "CronJobReady")).To(Equal(`cronjob keystone-cron runs keystone-manage trust_flush on schedule "*/5 * * * *" (suspended)`))
	})

	It("runs containerImage, and bootstraps adminUser, adminProject and region; a new image re-runs db-sync and rolls the pods", func() {
		key := deployReady(ns, func(a *keystonev1.KeystoneAPI) {
			a.Spec.ContainerImage, a.Spec.PreserveJobs = "registry.example.com/keystone:1", true
			a.Spec.AdminUser, a.Spec.AdminProject, a.Spec.Region = "root", "operators", "regionTwo"
		})
		Expect(podTemplate(key)(Default).Spec.Containers[0].Image).To(Equal("registry.example.com/keystone:1"))
		boot := &batchv1.Job{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keystone-bootstrap"}, boot)).To(Succeed())
		Expect(boot.Spec.Template.Spec.Containers[0].Image).To(Equal("registry.example.com/keystone:1"))
		Expect(boot.Spec.Template.Spec.Containers[0].Command[2]).To(And(ContainSubstring("--bootstrap-username 'root'"),
			ContainSubstring("--bootstrap-project-name 'operators'"), ContainSubstring("--bootstrap-region-id 'regionTwo'")))
		cm := &corev1.ConfigMap{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "openstack-config"}, cm)).To(Succeed())
		Expect(cm.Data["clouds.yaml"]).To(And(ContainSubstring("username: root"), ContainSubstring("project_name: operators"),
			ContainSubstring("region_name: regionTwo")))
		Expect(getAPI(key)(Default).Status.Region).To(Equal("regionTwo"))

		updateAPI(key, func(a *keystonev1.KeystoneAPI) { a.Spec.ContainerImage = "registry.example.com/keystone:2" })
		for _, name := range []string{"keystone-db-sync", "keystone-bootstrap"} {
			Eventually(func(g Gomega) {
				job := &batchv1.Job{}
				g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, job)).To(Succeed())
				g.Expect(job.Spec.Template.Spec.Containers[0].Image).To(Equal("registry.example.com/keystone:2"), "%s runs the new image", name)
			}).Should(Succeed())
			finishJob(ns, name, true, "")
		}
		Eventually(func(g Gomega) {
			g.Expect(podTemplate(key)(g).Spec.Containers[0].Image).To(Equal("registry.example.com/keystone:2"))
		}).Should(Succeed())
		rollOut(ns, "keystone", 1)
		expectConditions(key, condition{"Ready", "True", "Ready", ""})
	})

	It("installs the federated realms' metadata of federatedRealmConfig, and says what is wrong with it", func() {
		api := keystoneAPI(ns)
		api.Spec.FederatedRealmConfig = "federation-realms"
		key := createWithInputs(api)
		expectConditions(key, condition{"ServiceConfigReady", "False", "DependencyNotFound", "Warning"})
		Expect(message(key, "ServiceConfigReady")).To(Equal("federatedRealmConfig: secret federation-realms not found"))
		createSecret(ns, "federation-realms", map[string]string{"federation-config.json": "not json"})
		expectConditions(key, condition{"ServiceConfigReady", "False", "InvalidInput", "Error"})
		Expect(message(key, "ServiceConfigReady")).To(HavePrefix("federatedRealmConfig: key federation-config.json of secret federation-realms is not a JSON object of file names"))
		setSecretKey(ns, "federation-realms", "federation-config.json",
			`{"idp.example.com%2Frealms%2Fone.provider": {"issuer": "https://idp.example.com/realms/one"}, "idp.example.com%2Frealms%2Fone.client": {"client_id": "keystone"}}`)
		expectConditions(key, condition{"ServiceConfigReady", "True", "Ready", ""})
		config := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keystone-config-data"}, config)).To(Succeed())
		Expect(string(config.Data["federation-1"])).To(Equal(`{"issuer": "https://idp.example.com/realms/one"}`))
		// Each realm's file is mounted, and copied at start where mod_auth_openidc reads and
		// writes it (an EmptyDir).
		finishJob(ns, "keystone-db-sync", true, "")
		Eventually(func(g Gomega) {
			c := podTemplate(key)(g).Spec.Containers[0]
			g.Expect(c.VolumeMounts).To(ContainElements(corev1.VolumeMount{Name: "config-data",
				MountPath: "/var/lib/config-data/federation/idp.example.com%2Frealms%2Fone.client", SubPath: "federation-0", ReadOnly: true},
				corev1.VolumeMount{Name: "federation-metadata", MountPath: "/var/lib/httpd/metadata"}))
			// The copy is the last step before httpd starts (deploy.ServeCommand).
			g.Expect(c.Command[2]).To(ContainSubstring("install -m 0600 /var/lib/config-data/federation/* /var/lib/httpd/metadata/ && { [[ -z $stop ]] || exit 0; /usr/sbin/httpd -DFOREGROUND &"))
		}).Should(Succeed())
	})

	It("mounts extraMounts into the API pods, and takes them out when removed", func() {
		key := deployReady(ns)
		updateAPI(key, func(a *keystonev1.KeystoneAPI) {
			a.Spec.ExtraMounts = []keystonev1.KeystoneExtraMounts{{Name: "ldap", VolMounts: []storage.VolMounts{{
				Propagation: []storage.PropagationType{keystonev1.KeystonePropagation},
				Volumes: []storage.Volume{{Name: "domains", VolumeSource: storage.VolumeSource{
					Secret: &corev1.SecretVolumeSource{SecretName: "keystone-domains"}}}},
				Mounts: []corev1.VolumeMount{{Name: "domains", MountPath: "/etc/keystone/domains", ReadOnly: true}},
			}}}}
		})
		Eventually(func(g Gomega) {
			pod := podTemplate(key)(g)
			g.Expect(pod.Spec.Volumes).To(ContainElement(HaveField("Name", "domains")))
			g.Expect(pod.Spec.Containers[0].VolumeMounts).To(ContainElement(HaveField("MountPath", "/etc/keystone/domains")))
		}).Should(Succeed())
		updateAPI(key, func(a *keystonev1.KeystoneAPI) { a.Spec.ExtraMounts = nil })
		Eventually(func(g Gomega) {
			g.Expect(podTemplate(key)(g).Spec.Volumes).NotTo(ContainElement(HaveField("Name", "domains")))
		}).Should(Succeed())
	})

	It("renders httpdCustomization, apiTimeout, enableSecureRBAC and every defaultConfigOverwrite file", func() {
		api := keystoneAPI(ns)
		api.Spec.HttpdCustomization.CustomConfigSecret = ptr.To("httpd-custom")
		api.Spec.APITimeout = 120
		api.Spec.EnableSecureRBAC = true
		api.Spec.DefaultConfigOverwrite = map[string]string{"policy.yaml": "\"identity:list_users\": \"role:admin\"\n"}
		key := createWithInputs(api)
		expectConditions(key, condition{"ServiceConfigReady", "False", "DependencyNotFound", "Warning"})
		Expect(message(key, "ServiceConfigReady")).To(Equal("httpdCustomization.customConfigSecret httpd-custom not found"))
		createSecret(ns, "httpd-custom", map[string]string{"limits.conf": "LimitRequestBody {{ .APITimeout }}000\n"})
		expectConditions(key, condition{"ServiceConfigReady", "True", "Ready", ""})
		config := &corev1.Secret{}
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keystone-config-data"}, config)).To(Succeed())
			g.Expect(config.Data).To(HaveKey("httpd_custom_public_limits.conf"))
		}).Should(Succeed())
		Expect(string(config.Data["httpd_custom_internal_limits.conf"])).To(Equal("LimitRequestBody 120000\n"))
		httpd := string(config.Data["httpd.conf"])
		Expect(httpd).To(ContainSubstring(`Include "/etc/httpd/conf/httpd_custom_public_limits.conf"`))
		Expect(httpd).To(ContainSubstring("TimeOut 120"))
		Expect(httpd).To(ContainSubstring("WSGIDaemonProcess internal processes=3 "))
		Expect(string(config.Data["keystone.conf"])).To(ContainSubstring("enforce_new_defaults = true\nenforce_scope = true"))
		finishJob(ns, "keystone-db-sync", true, "")
		Eventually(func(g Gomega) {
			g.Expect(podTemplate(key)(g).Spec.Containers[0].VolumeMounts).To(ContainElements(
				corev1.VolumeMount{Name: "config-data", MountPath: "/etc/keystone/policy.yaml", SubPath: "policy.yaml", ReadOnly: true},
				corev1.VolumeMount{Name: "config-data", MountPath: "/etc/httpd/conf/httpd_custom_public_limits.conf",
					SubPath: "httpd_custom_public_limits.conf", ReadOnly: true}))
		}).Should(Succeed())

		By("a snippet changed: the configuration follows")
		setSecretKey(ns, "httpd-custom", "limits.conf", "LimitRequestBody 1\n")
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keystone-config-data"}, config)).To(Succeed())
			g.Expect(string(config.Data["httpd_custom_public_limits.conf"])).To(Equal("LimitRequestBody 1\n"))
		}).Should(Succeed())
	})
})

func metaOf(ns, name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }

// playTransportURL plays infra-operator: the TransportURL Ready, its Secret written.
func playTransportURL(ns, name, url string) {
	GinkgoHelper()
	createSecret(ns, "rabbitmq-transport-url-"+name, map[string]string{"transport_url": url, "quorumqueues": "true"})
	tu := &rabbitmqv1.TransportURL{}
	markReady(tu, &tu.Status.Conditions, types.NamespacedName{Namespace: ns, Name: name})
	Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, tu)).To(Succeed())
		tu.Status.SecretName = "rabbitmq-transport-url-" + name
		g.Expect(k8sClient.Status().Update(ctx, tu)).To(Succeed())
	}).Should(Succeed())
}

var _ = Describe("KeystoneAPI notifications", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("asks infra-operator for a TransportURL, waits for it, renders the notifier, and falls back to the cluster rabbitmq", func() {
		api := keystoneAPI(ns)
		api.Spec.NotificationsBus = &keystonev1.NotificationsBus{Cluster: "rabbitmq", User: "keystone", Vhost: "keystone"}
		key := createWithoutDatabase(api)
		markDatabaseReady(ns, galera)
		tuKey := types.NamespacedName{Namespace: ns, Name: "keystone-keystone-transport"}
		expectConditions(key, condition{"Ready", "False", "Requested", "Info"},
			condition{"RabbitMqTransportURLReady", "False", "Requested", "Info"})
		tu := &rabbitmqv1.TransportURL{}
		Expect(k8sClient.Get(ctx, tuKey, tu)).To(Succeed())
		Expect(tu.Spec.RabbitmqClusterName).To(Equal("rabbitmq"))
		Expect(tu.Spec.Username).To(Equal("keystone"))
		Expect(tu.Spec.Vhost).To(Equal("keystone"))
		Expect(metav1.IsControlledBy(tu, getAPI(key)(Default))).To(BeTrue())

		playTransportURL(ns, tuKey.Name, "rabbit://keystone:pw1@rabbitmq."+ns+".svc:5672/keystone?ssl=0")
		expectConditions(key, condition{"RabbitMqTransportURLReady", "True", "Ready", ""}, condition{"ServiceConfigReady", "True", "Ready", ""})
		Expect(getAPI(key)(Default).Status.TransportURLSecret).To(Equal("rabbitmq-transport-url-" + tuKey.Name))
		config := func(g Gomega) string {
			s := &corev1.Secret{}
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keystone-config-data"}, s)).To(Succeed())
			return string(s.Data["keystone.conf"])
		}
		Expect(config(Default)).To(ContainSubstring("[oslo_messaging_notifications]\ndriver = messagingv2\n" +
			"transport_url = rabbit://keystone:pw1@rabbitmq." + ns + ".svc:5672/keystone?ssl=0\ntopics = notifications, barbican_notifications"))
		Expect(config(Default)).To(ContainSubstring("rabbit_quorum_queue = true"))

		By("infra-operator rotates the password: the configuration follows")
		setSecretKey(ns, "rabbitmq-transport-url-"+tuKey.Name, "transport_url", "rabbit://keystone:pw2@rabbitmq."+ns+".svc:5672/keystone?ssl=0")
		Eventually(config).Should(ContainSubstring("keystone:pw2@"))

		By("the deprecated rabbitMqClusterName names the cluster when notificationsBus is unset")
		updateAPI(key, func(a *keystonev1.KeystoneAPI) {
			a.Spec.NotificationsBus, a.Spec.RabbitMqClusterName = nil, "rabbitmq-cell1"
		})
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, tuKey, tu)).To(Succeed())
			g.Expect(tu.Spec.RabbitmqClusterName).To(Equal("rabbitmq-cell1"))
			g.Expect(tu.Spec.Username).To(BeEmpty())
		}).Should(Succeed())

		By("neither set: keystone-operator's default, the cluster rabbitmq; the same TransportURL, the notifier stays")
		uid := tu.UID
		updateAPI(key, func(a *keystonev1.KeystoneAPI) { a.Spec.RabbitMqClusterName = "" })
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, tuKey, tu)).To(Succeed())
			g.Expect(tu.Spec.RabbitmqClusterName).To(Equal("rabbitmq"))
			g.Expect(tu.Spec.Username).To(BeEmpty())
			g.Expect(tu.Spec.Vhost).To(BeEmpty())
		}).Should(Succeed())
		Expect(tu.UID).To(Equal(uid), "the TransportURL is patched, not replaced")
		expectConditions(key, condition{"RabbitMqTransportURLReady", "True", "Ready", ""}, condition{"ServiceConfigReady", "True", "Ready", ""})
		Expect(message(key, "RabbitMqTransportURLReady")).To(Equal(
			"notifications go to RabbitMQ cluster rabbitmq through TransportURL keystone-keystone-transport"))
		Expect(config(Default)).To(ContainSubstring("[oslo_messaging_notifications]\ndriver = messagingv2\n"))
	})

	It("waits for the Secret its TransportURL names, and goes on when it comes", func() {
		key := createWithoutDatabase(keystoneAPI(ns))
		markDatabaseReady(ns, galera)
		tuKey := types.NamespacedName{Namespace: ns, Name: "keystone-keystone-transport"}
		secretName := "rabbitmq-transport-url-" + tuKey.Name
		tu := &rabbitmqv1.TransportURL{}
		markReady(tu, &tu.Status.Conditions, tuKey)
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, tuKey, tu)).To(Succeed())
			tu.Status.SecretName = secretName
			g.Expect(k8sClient.Status().Update(ctx, tu)).To(Succeed())
		}).Should(Succeed())
		expectConditions(key, condition{"RabbitMqTransportURLReady", "False", "DependencyNotFound", "Warning"})
		Expect(message(key, "RabbitMqTransportURLReady")).To(Equal(
			"TransportURL keystone-keystone-transport: secret " + secretName + " not found"))
		Expect(getAPI(key)(Default).Status.TransportURLSecret).To(Equal(secretName),
			"recorded before the Secret exists, as keystone-operator does: the Secret's events wake the KeystoneAPI by it")

		By("infra-operator's Secret comes: nothing else changes, and the KeystoneAPI goes on")
		createSecret(ns, secretName, map[string]string{"transport_url": "rabbit://u:p@rabbitmq." + ns + ".svc:5672/?ssl=0"})
		expectConditions(key, condition{"RabbitMqTransportURLReady", "True", "Ready", ""}, condition{"ServiceConfigReady", "True", "Ready", ""})
	})
})

var _ = Describe("KeystoneAPI topologyRef", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	createTopology := func(name, zoneKey string) {
		GinkgoHelper()
		Expect(k8sClient.Create(ctx, &topologyv1.Topology{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: topologyv1.TopologySpec{TopologySpreadConstraints: &[]corev1.TopologySpreadConstraint{{
				MaxSkew: 1, TopologyKey: zoneKey, WhenUnsatisfiable: corev1.ScheduleAnyway}}}})).To(Succeed())
	}
	finalizersOf := func(name string) func(g Gomega) []string {
		return func(g Gomega) []string {
			t := &topologyv1.Topology{}
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, t)).To(Succeed())
			return t.Finalizers
		}
	}

	It("waits for its Topology, spreads the pods with it, holds it while they use it, and lets it go", func() {
		api := keystoneAPI(ns)
		api.Spec.TopologyRef = &keystonev1.TopoRef{Name: "default"}
		key := createWithoutDatabase(api)
		expectConditions(key, condition{"TopologyReady", "False", "DependencyNotFound", "Warning"})
		Expect(message(key, "TopologyReady")).To(Equal("topology default not found"))
		createTopology("default", "topology.kubernetes.io/zone")
		expectConditions(key, condition{"TopologyReady", "True", "Ready", ""})
		markDatabaseReady(ns, galera)
		playNotifications(key)
		finishRollout(key, 1)
		mine := "keystone.openstack.org/keystoneapi-keystone"
		Expect(finalizersOf("default")(Default)).To(ContainElement(mine))
		Expect(getAPI(key)(Default).Status.LastAppliedTopology).To(Equal(&keystonev1.TopoRef{Name: "default", Namespace: ns}))
		c := podTemplate(key)(Default).Spec.TopologySpreadConstraints
		Expect(c).To(HaveLen(1))
		Expect(c[0].TopologyKey).To(Equal("topology.kubernetes.io/zone"))
		Expect(c[0].LabelSelector.MatchLabels).To(Equal(deploy.Labels(getAPI(key)(Default))), "the constraint selects Keystone's pods")

		By("another Topology: the first is released once the pods use the second")
		createTopology("hosts", "kubernetes.io/hostname")
		updateAPI(key, func(a *keystonev1.KeystoneAPI) { a.Spec.TopologyRef.Name = "hosts" })
		Eventually(func(g Gomega) {
			g.Expect(podTemplate(key)(g).Spec.TopologySpreadConstraints[0].TopologyKey).To(Equal("kubernetes.io/hostname"))
		}).Should(Succeed())
		rollOut(ns, "keystone", 1)
		Eventually(finalizersOf("default")).ShouldNot(ContainElement(mine))
		Eventually(finalizersOf("hosts")).Should(ContainElement(mine))

		By("topologyRef removed: the pods spread as the scheduler decides, the Topology is released")
		updateAPI(key, func(a *keystonev1.KeystoneAPI) { a.Spec.TopologyRef = nil })
		Eventually(func(g Gomega) { g.Expect(podTemplate(key)(g).Spec.TopologySpreadConstraints).To(BeEmpty()) }).Should(Succeed())
		rollOut(ns, "keystone", 1)
		Eventually(finalizersOf("hosts")).ShouldNot(ContainElement(mine))
		expectConditions(key, condition{"Ready", "True", "Ready", ""})

		By("deleted while using a Topology: the finalizer goes with it")
		updateAPI(key, func(a *keystonev1.KeystoneAPI) { a.Spec.TopologyRef = &keystonev1.TopoRef{Name: "default"} })
		Eventually(finalizersOf("default")).Should(ContainElement(mine))
		Expect(k8sClient.Delete(ctx, getAPI(key)(Default))).To(Succeed())
		Eventually(finalizersOf("default")).ShouldNot(ContainElement(mine))
	})

	It("refuses a Topology of another namespace", func() {
		api := keystoneAPI(ns)
		api.Spec.TopologyRef = &keystonev1.TopoRef{Name: "default", Namespace: "other"}
		key := createWithoutDatabase(api)
		expectConditions(key, condition{"TopologyReady", "False", "InvalidInput", "Error"})
		Expect(message(key, "TopologyReady")).To(ContainSubstring("the Topology must be in the KeystoneAPI's namespace " + ns))
	})
})

var _ = Describe("KeystoneAPI networkAttachments", func() {
	It("waits for its NetworkAttachmentDefinition, asks Multus for it, and reports the pods' addresses", func() {
		ns := newNamespace()
		api := keystoneAPI(ns)
		api.Spec.NetworkAttachments = []string{"internalapi"}
		key := createWithInputs(api)
		finishJob(ns, "keystone-db-sync", true, "")
		finishJob(ns, "keystone-bootstrap", true, "")
		By("no NetworkAttachmentDefinition: no Deployment, and the step says which")
		expectConditions(key, condition{"DeploymentReady", "False", "DependencyNotFound", "Warning"})
		Expect(message(key, "DeploymentReady")).To(Equal("NetworkAttachmentDefinition internalapi not found (networkAttachments)"))
		Expect(k8sClient.Create(ctx, testutil.NetworkAttachmentDefinition(ns, "internalapi"))).To(Succeed())

		By("the definition created: the pods ask Multus for it (found within the 10-s re-check)")
		Eventually(func(g Gomega) {
			g.Expect(podTemplate(key)(g).Annotations).To(HaveKeyWithValue("k8s.v1.cni.cncf.io/networks",
				`[{"name":"internalapi","namespace":"`+ns+`","interface":"internalapi"}]`))
		}, 20*time.Second).Should(Succeed())
		rollOut(ns, "keystone", 1)

		By("a pod without its address on the network yet")
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "keystone-0", Labels: deploy.Labels(getAPI(key)(Default))},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "keystone-api", Image: "keystone"}}}}
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		touch(key)
		expectConditions(key, condition{"NetworkAttachmentsReady", "False", "Requested", "Info"})
		Expect(message(key, "NetworkAttachmentsReady")).To(Equal("pods without an address on internalapi (0 of 1 pods)"))

		By("Multus reports it")
		update(client.ObjectKeyFromObject(pod), &corev1.Pod{}, func(p *corev1.Pod) {
			p.Annotations = map[string]string{"k8s.v1.cni.cncf.io/network-status": `[{"name":"ovn-kubernetes","interface":"eth0","ips":["10.217.0.40"],"default":true},` +
				`{"name":"` + ns + `/internalapi","interface":"internalapi","ips":["172.17.0.30"]}]`}
		})
		Eventually(func(g Gomega) {
			a := getAPI(key)(g)
			g.Expect(a.Status.NetworkAttachments).To(Equal(map[string][]string{ns + "/internalapi": {"172.17.0.30"}}))
			g.Expect(a.Status.Conditions.IsTrue("NetworkAttachmentsReady")).To(BeTrue())
			g.Expect(a.IsReady()).To(BeTrue())
		}, 20*time.Second).Should(Succeed())
	})
})
