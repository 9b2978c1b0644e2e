package functional

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-logr/logr/funcr"
	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/access"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/tests/support/fakekeystone"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

var _ = Describe("KeystoneAPI fernet keys", func() {
	It("rotate after fernetRotationDays the way keystone-manage does, without restarting pods", func() {
		ns := newNamespace()
		key := deployReady(ns)
		keysKey := types.NamespacedName{Namespace: ns, Name: "keystone"}
		before := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, keysKey, before)).To(Succeed())
		oldKeys := deploy.FernetKeys(before.Data)
		dep := &appsv1.Deployment{}
		Expect(k8sClient.Get(ctx, key, dep)).To(Succeed())
		template := dep.Spec.Template.DeepCopy()
		nextRotation := func(s *corev1.Secret) float64 {
			GinkgoHelper()
			at, err := time.Parse(time.RFC3339, s.Annotations[deploy.RotatedAtAnnotation])
			Expect(err).NotTo(HaveOccurred())
			return float64(at.Add(24 * time.Hour).Unix())
		}
		Eventually(func() float64 { return deadlineGauge("KeystoneAPI", ns, "keystone", "fernetRotation") }).Should(
			Equal(nextRotation(before)), "the next rotation, as a gauge to alert on")
		scrapeSeries() // for the alerts (monitoring_test.go)

		By("no rotation before it is due, and no new keys on later reconciles")
		touch(key)
		Consistently(func(g Gomega) {
			s := &corev1.Secret{}
			g.Expect(k8sClient.Get(ctx, keysKey, s)).To(Succeed())
			g.Expect(deploy.FernetKeys(s.Data)).To(Equal(oldKeys))
		}, time.Second).Should(Succeed())

		By("a day later")
		testClock.Advance(25 * time.Hour)
		// The operator's clock is shared by every spec: set back afterwards.
		DeferCleanup(func() { testClock.Advance(-(25 * time.Hour)) })
		touch(key)
		Eventually(func(g Gomega) {
			s := &corev1.Secret{}
			g.Expect(k8sClient.Get(ctx, keysKey, s)).To(Succeed())
			keys := deploy.FernetKeys(s.Data)
			g.Expect(keys).To(HaveLen(5))
			g.Expect(keys[4]).To(Equal(oldKeys[0]), "the staged key is the new primary")
			g.Expect(keys[1:4]).To(Equal(oldKeys[2:5]), "the oldest secondary key is dropped")
			g.Expect(keys[0]).NotTo(BeElementOf(oldKeys))
			g.Expect(deploy.CredentialKeys(s.Data)).To(Equal(deploy.CredentialKeys(before.Data)))
		}).Should(Succeed())
		expectConditions(key, condition{"Ready", "True", "Ready", ""}, condition{"FernetKeysReady", "True", "Ready", ""})
		rotated := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, keysKey, rotated)).To(Succeed())
		Eventually(func() float64 { return deadlineGauge("KeystoneAPI", ns, "keystone", "fernetRotation") }).Should(
			Equal(nextRotation(rotated)), "moved on with the rotation")
		Expect(k8sClient.Get(ctx, key, dep)).To(Succeed())
		Expect(dep.Spec.Template).To(Equal(*template), "the pods are not rolled: keys are mounted, not in the config hash")

		By("a smaller fernetMaxActiveKeys drops the oldest keys at once")
		updateAPI(key, func(a *keystonev1.KeystoneAPI) { a.Spec.FernetMaxActiveKeys = ptr.To[int32](3) })
		Eventually(func(g Gomega) {
			s := &corev1.Secret{}
			g.Expect(k8sClient.Get(ctx, keysKey, s)).To(Succeed())
			g.Expect(deploy.FernetKeys(s.Data)).To(HaveLen(3))
		}).Should(Succeed())
	})
})

var _ = Describe("KeystoneAPI configuration written for keystone-operator", func() {
	It("renders it as keystone-operator does: its parameters, a file that is no template used as written, and says so", func() {
		ns := newNamespace()
		createSecret(ns, "httpd-oidc", map[string]string{"oidc.conf": `OIDCRedirectURI "{{ .KeystoneEndpointPublic }}/v3/auth/OS-FEDERATION/websso/openid"`})
		key := createWithInputs(func() *keystonev1.KeystoneAPI {
			api := keystoneAPI(ns)
			api.Spec.HttpdCustomization.CustomConfigSecret = ptr.To("httpd-oidc")
			api.Spec.CustomServiceConfig = "[federation]\ntrusted_dashboard = {{ .KeystoneEndpointPublic }}/dashboard/auth/websso/\n"
			api.Spec.DefaultConfigOverwrite = map[string]string{"policy.yaml": "# {{ .NotAParameter }}\n"}
			return api
		}())
		expectConditions(key, condition{"ServiceConfigReady", "True", "Ready", ""})
		Expect(message(key, "ServiceConfigReady")).To(HavePrefix("configuration rendered into secret keystone-config-data; " +
			"used as written, as keystone-operator uses what is no template of its parameters: rendering defaultConfigOverwrite " +
			"policy.yaml: template: tmp:1:5: executing \"tmp\" at <.NotAParameter>: map has no entry for key \"NotAParameter\""))
		config := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keystone-config-data"}, config)).To(Succeed())
		public := "http://keystone-public." + ns + ".svc:5000"
		Expect(string(config.Data["custom.conf"])).To(Equal("[federation]\ntrusted_dashboard = " + public + "/dashboard/auth/websso/\n"))
		Expect(string(config.Data["httpd_custom_public_oidc.conf"])).To(Equal(`OIDCRedirectURI "` + public + `/v3/auth/OS-FEDERATION/websso/openid"`))
		Expect(string(config.Data["policy.yaml"])).To(Equal("# {{ .NotAParameter }}\n"))
	})
})

var _ = Describe("KeystoneAPI fernet rotation annotation", func() {
	It("reports a malformed value as a Warning naming it, and counts the keys as rotated now, as keystone-operator does", func() {
		ns := newNamespace()
		key := deployReady(ns)
		keysKey := types.NamespacedName{Namespace: ns, Name: "keystone"}
		before := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, keysKey, before)).To(Succeed())
		update(keysKey, &corev1.Secret{}, func(s *corev1.Secret) {
			s.Annotations[deploy.RotatedAtAnnotation] = "yesterday"
		})
		Eventually(func(g Gomega) {
			events := &corev1.EventList{}
			g.Expect(k8sClient.List(ctx, events, client.InNamespace(ns))).To(Succeed())
			var found bool
			for _, e := range events.Items {
				found = found || (e.Type == corev1.EventTypeWarning && e.Reason == "InvalidAnnotation" &&
					strings.Contains(e.Message, `annotation keystone.openstack.org/rotatedat="yesterday" of secret keystone is not an RFC 3339 time`))
			}
			g.Expect(found).To(BeTrue(), "a Warning event naming the annotation")
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			s := &corev1.Secret{}
			g.Expect(k8sClient.Get(ctx, keysKey, s)).To(Succeed())
			_, err := time.Parse(time.RFC3339, s.Annotations[deploy.RotatedAtAnnotation])
			g.Expect(err).NotTo(HaveOccurred(), "a valid time is back: the schedule goes on from now")
			g.Expect(deploy.FernetKeys(s.Data)).To(Equal(deploy.FernetKeys(before.Data)), "not rotated: no key dropped")
		}).Should(Succeed())
		expectConditions(key, condition{"Ready", "True", "Ready", ""}, condition{"FernetKeysReady", "True", "Ready", ""})
	})
})

var _ = Describe("KeystoneAPI in external mode", func() {
	var ns string
	var ks *fakekeystone.Server
	BeforeEach(func() {
		ns = newNamespace()
		ks = fakekeystone.New("admin", "secret-admin")
		DeferCleanup(ks.Close)
	})

	external := func() types.NamespacedName {
		api := externalKeystoneAPI(ns)
		api.Spec.Override.Service.Internal.EndpointURL = ptr.To(ks.URL)
		Expect(k8sClient.Create(ctx, api)).To(Succeed())
		return client.ObjectKeyFromObject(api)
	}

	It("is Ready when the admin authenticates at the override URL, and creates only the client configuration", func() {
		key := external()
		createSecret(ns, "osp-secret", map[string]string{"AdminPassword": "secret-admin"})
		expectConditions(key, condition{"Ready", "True", "Ready", ""}, condition{"KeystoneEndpointReady", "True", "Ready", ""},
			condition{"OpenStackConfigReady", "True", "Ready", ""})
		api := getAPI(key)(Default)
		Expect(api.Status.APIEndpoints).To(Equal(map[string]string{"public": "https://keystone.example.com", "internal": ks.URL}))
		Expect(api.Status.Region).To(Equal("regionOne"))
		Expect(api.GetRegion()).To(Equal("regionOne"))
		Expect(summary(api.Status.Conditions)).To(HaveLen(5), "Ready, InputReady, KeystoneEndpointReady, OpenStackConfigReady, RegistrationsReady")
		Expect(writesIn(ns)).NotTo(HaveKey(ContainSubstring("POST /apis/")), "no workload created")
		// Events are sent by the recorder's own goroutine, so the POST of the first may
		// come after Ready is written.
		Eventually(func(g Gomega) {
			var created []string
			for req := range writesIn(ns) {
				if strings.HasPrefix(req, "POST ") {
					created = append(created, req)
				}
			}
			g.Expect(created).To(ConsistOf(ContainSubstring("/configmaps"), ContainSubstring("/secrets"), ContainSubstring("/events")))
		}).Should(Succeed())
		cm := &corev1.ConfigMap{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "openstack-config"}, cm)).To(Succeed())
		Expect(cm.Data["clouds.yaml"]).To(ContainSubstring("auth_url: https://keystone.example.com"))
		Expect(cm.Data["clouds.yaml"]).NotTo(ContainSubstring("secret-admin"))
		secret := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "openstack-config-secret"}, secret)).To(Succeed())
		Expect(string(secret.Data["secure.yaml"])).To(ContainSubstring("password: secret-admin"))
		Expect(string(secret.Data["cloudrc"])).To(ContainSubstring("export OS_PASSWORD='secret-admin'"))

		By("a new admin password reaches the client configuration")
		ks.SetPassword("admin", "secret-admin-2")
		setSecretKey(ns, "osp-secret", "AdminPassword", "secret-admin-2")
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "openstack-config-secret"}, secret)).To(Succeed())
			g.Expect(string(secret.Data["secure.yaml"])).To(ContainSubstring("password: secret-admin-2"))
		}).Should(Succeed())
	})

	It("stalls with an Error when Keystone refuses the admin password, records the refusal, and recovers when the secret is fixed", func() {
		key := external()
		createSecret(ns, "osp-secret", map[string]string{"AdminPassword": "wrong"})
		expectConditions(key,
			condition{"Ready", "False", "InvalidInput", "Error"},
			condition{"KeystoneEndpointReady", "False", "InvalidInput", "Error"},
			condition{"Stalled", "True", "InvalidInput", ""})

		By("the refusal is recorded on the KeystoneAPI, for a restarted operator, and the next round says it read it")
		var recorded string
		Eventually(func(g Gomega) {
			api := getAPI(key)(g)
			recorded = api.Annotations[access.AdminLoginRefusedAnnotation]
			g.Expect(recorded).NotTo(BeEmpty())
			ready := api.Status.Conditions.Get("KeystoneEndpointReady")
			g.Expect(ready).NotTo(BeNil())
			g.Expect(ready.Message).To(ContainSubstring("the refusal is recorded on this KeystoneAPI"))
		}).Should(Succeed())
		Expect(ks.Requests()["POST /v3/auth"]).To(Equal(1), "one refused login")

		By("a login that works with an older record leaves the newer one (the API server refuses the JSON patch's test: 422)")
		var logged []string
		record := access.RecordAdminRefusal(k8sClient, funcr.New(func(_, args string) { logged = append(logged, args) }, funcr.Options{}))
		record(ctx, identity.Credentials{Holder: key, Recorded: "an older record"}, "")
		Expect(getAPI(key)(Default).Annotations).To(HaveKeyWithValue(access.AdminLoginRefusedAnnotation, recorded))
		Expect(logged).To(BeEmpty(), "not a failure")

		setSecretKey(ns, "osp-secret", "AdminPassword", "secret-admin")
		expectConditions(key, condition{"Ready", "True", "Ready", ""})
		Eventually(func(g Gomega) {
			g.Expect(getAPI(key)(g).Annotations).NotTo(HaveKey(access.AdminLoginRefusedAnnotation))
		}).Should(Succeed(), "the record goes once the admin's login works")
	})

	It("warns while Keystone is unavailable", func() {
		ks.Fail(http.StatusServiceUnavailable)
		key := external()
		createSecret(ns, "osp-secret", map[string]string{"AdminPassword": "secret-admin"})
		expectConditions(key,
			condition{"Ready", "False", "ServiceUnavailable", "Warning"},
			condition{"KeystoneEndpointReady", "False", "ServiceUnavailable", "Warning"})
	})
})

var _ = Describe("A KeystoneAPI applied from YAML", func() {
	It("keeps its generation: the operator writes finalizers and status, never the spec", func() {
		ns := newNamespace()
		data, err := os.ReadFile(filepath.Join("..", "..", "config", "samples", "keystone_v1beta1_keystoneapi.yaml"))
		Expect(err).NotTo(HaveOccurred())
		obj := &unstructured.Unstructured{}
		Expect(yaml.Unmarshal(data, &obj.Object)).To(Succeed())
		obj.SetNamespace(ns)
		Expect(k8sClient.Create(ctx, obj)).To(Succeed())
		key := client.ObjectKeyFromObject(obj)
		Eventually(func(g Gomega) {
			api := getAPI(key)(g)
			g.Expect(api.Finalizers).To(ContainElement("keystone.openstack.org/keystoneapi"))
			g.Expect(api.Status.ObservedGeneration).To(BeEquivalentTo(1))
		}).Should(Succeed())
		Consistently(func(g Gomega) { g.Expect(getAPI(key)(g).Generation).To(BeEquivalentTo(1)) }, time.Second).Should(Succeed())
	})
})
