package functional

import (
	"net/http"
	"strings"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/tests/support/fakekeystone"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// refsOf reads each of objs (named in its metadata) and returns the reference
// status.relatedObjects should hold for it: apiVersion, kind, namespace, name, uid.
func refsOf(g Gomega, objs ...client.Object) []corev1.ObjectReference {
	var out []corev1.ObjectReference
	for _, o := range objs {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(o), o)).To(Succeed())
		gvk, err := apiutil.GVKForObject(o, k8sClient.Scheme())
		g.Expect(err).NotTo(HaveOccurred())
		out = append(out, corev1.ObjectReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind,
			Namespace: o.GetNamespace(), Name: o.GetName(), UID: o.GetUID()})
	}
	return out
}

// names is kind/name of each reference, for a readable failure.
func names(refs []corev1.ObjectReference) []string {
	var out []string
	for _, r := range refs {
		out = append(out, r.Kind+"/"+r.Name)
	}
	return out
}

var _ = Describe("status.relatedObjects", func() {
	It("lists what a KeystoneAPI created or holds, follows an object made again, and in external mode only the client configuration", func() {
		ns := newNamespace()
		key := deployReady(ns)
		api := getAPI(key)(Default)
		Expect(names(api.Status.RelatedObjects)).To(Equal([]string{
			"Secret/keystone-cleanup-credentials", "ServiceAccount/keystone-keystone", "Role/keystone-keystone-role",
			"RoleBinding/keystone-keystone-rolebinding", "MariaDBDatabase/keystone", "MariaDBAccount/keystone",
			"Secret/keystone-db-secret", "Memcached/memcached", "TransportURL/keystone-keystone-transport",
			"Secret/keystone-config-data", "Secret/keystone-private-state", "Secret/keystone",
			"Service/keystone-public", "Service/keystone-internal", "Deployment/keystone",
			"CronJob/keystone-cron", "ConfigMap/openstack-config", "Secret/openstack-config-secret"}),
			"the Jobs succeeded and were deleted (preserveJobs is off)")
		for _, ref := range api.Status.RelatedObjects {
			Expect(ref.UID).NotTo(BeEmpty(), ref.Kind+"/"+ref.Name)
			Expect(ref.Namespace).To(Equal(ns))
			Expect(ref.ResourceVersion).To(BeEmpty(), "a change of the object does not rewrite this status")
		}

		By("the CronJob deleted by hand: made again, and the list names the new one")
		cron := &batchv1.CronJob{}
		cronKey := types.NamespacedName{Namespace: ns, Name: deploy.TrustFlushCronJobName(api)}
		Expect(k8sClient.Get(ctx, cronKey, cron)).To(Succeed())
		Expect(k8sClient.Delete(ctx, cron)).To(Succeed())
		Eventually(func(g Gomega) {
			again := &batchv1.CronJob{}
			g.Expect(k8sClient.Get(ctx, cronKey, again)).To(Succeed())
			g.Expect(again.UID).NotTo(Equal(cron.UID))
			g.Expect(getAPI(key)(g).Status.RelatedObjects).To(ContainElement(refsOf(g, again)[0]))
		}).Should(Succeed())

		By("in external mode, only the client configuration")
		ks := fakekeystone.New("admin", "secret-admin")
		DeferCleanup(ks.Close)
		ext := externalKeystoneAPI(newNamespace())
		ext.Spec.Override.Service.Internal.EndpointURL = ptr.To(ks.URL)
		Expect(k8sClient.Create(ctx, ext)).To(Succeed())
		createSecret(ext.Namespace, "osp-secret", map[string]string{"AdminPassword": "secret-admin"})
		Eventually(func(g Gomega) {
			g.Expect(names(getAPI(client.ObjectKeyFromObject(ext))(g).Status.RelatedObjects)).To(
				Equal([]string{"ConfigMap/openstack-config", "Secret/openstack-config-secret"}))
		}).Should(Succeed())
	})
})

// expectRelated waits until the relatedObjects that get reads are exactly objs, as they are.
func expectRelated(get func(g Gomega) []corev1.ObjectReference, objs ...client.Object) {
	GinkgoHelper()
	Eventually(func(g Gomega) { g.Expect(get(g)).To(Equal(refsOf(g, objs...))) }).Should(Succeed())
}

func serviceRelated(key types.NamespacedName) func(g Gomega) []corev1.ObjectReference {
	return func(g Gomega) []corev1.ObjectReference { return getService(key)(g).Status.RelatedObjects }
}

func endpointRelated(key types.NamespacedName) func(g Gomega) []corev1.ObjectReference {
	return func(g Gomega) []corev1.ObjectReference { return getEndpoint(key)(g).Status.RelatedObjects }
}

func appCredRelated(key types.NamespacedName) func(g Gomega) []corev1.ObjectReference {
	return func(g Gomega) []corev1.ObjectReference { return getAppCred(key)(g).Status.RelatedObjects }
}

func secretNamed(ns, name string) *corev1.Secret {
	s := &corev1.Secret{}
	s.Namespace, s.Name = ns, name
	return s
}

var _ = Describe("The KeystoneAPI's view of its namespace's registrations", func() {
	It("counts them, names the failing one in RegistrationsReady without gating Ready, and writes only when a Ready changes", func() {
		ns := newNamespace()
		ks := fakekeystone.New("admin", "secret-admin")
		DeferCleanup(ks.Close)
		api := externalKeystoneAPI(ns)
		api.Spec.Override.Service.Internal.EndpointURL = ptr.To(ks.URL)
		Expect(k8sClient.Create(ctx, api)).To(Succeed())
		apiKey := client.ObjectKeyFromObject(api)
		createSecret(ns, "osp-secret", map[string]string{"AdminPassword": "secret-admin"})
		expectConditions(apiKey, condition{"Ready", "True", "Ready", ""}, condition{"RegistrationsReady", "True", "Ready", ""})
		Expect(message(apiKey, "RegistrationsReady")).To(Equal("no KeystoneService, KeystoneEndpoint or KeystoneApplicationCredential in the namespace"))
		Expect(getAPI(apiKey)(Default).Status.Registrations).To(Equal(&keystonev1.KeystoneAPIRegistrations{}))

		By("a KeystoneService whose password is missing: a Warning naming it, and the KeystoneAPI stays Ready")
		svcKey := types.NamespacedName{Namespace: ns, Name: "glance"}
		Expect(k8sClient.Create(ctx, keystoneService(ns))).To(Succeed())
		expectConditions(apiKey, condition{"Ready", "True", "Ready", ""},
			condition{"RegistrationsReady", "False", "DependencyNotFound", "Warning"})
		Expect(message(apiKey, "RegistrationsReady")).To(HavePrefix("KeystoneService glance: InputReady"))
		Expect(message(apiKey, "RegistrationsReady")).To(HaveSuffix("(1 of 1 registrations not ready)"))
		Expect(getAPI(apiKey)(Default).Status.Conditions.Get("Stalled")).To(BeNil())

		By("the password arrives: every registration Ready, counted")
		setSecretKey(ns, "osp-secret", "GlancePassword", "glance-1")
		Expect(k8sClient.Create(ctx, keystoneEndpoint(ns))).To(Succeed())
		expectConditions(apiKey, condition{"RegistrationsReady", "True", "Ready", ""})
		Eventually(func(g Gomega) {
			g.Expect(getAPI(apiKey)(g).Status.Registrations).To(Equal(&keystonev1.KeystoneAPIRegistrations{
				KeystoneServices:  keystonev1.RegistrationCount{Total: 1, Ready: 1},
				KeystoneEndpoints: keystonev1.RegistrationCount{Total: 1, Ready: 1}}))
		}).Should(Succeed())

		By("a registration round that changes no Ready writes nothing to the KeystoneAPI")
		apiStatus := "keystoneapis/keystone/status"
		statusWrites := func() int64 {
			var n int64
			for req, count := range settledWrites(ns) {
				if strings.HasSuffix(req, apiStatus) {
					n += count
				}
			}
			return n
		}
		before := statusWrites()
		reconciledAfter("keystoneservice", func() { update(svcKey, &keystonev1.KeystoneService{}, touchAnnotation) })
		Expect(statusWrites()).To(Equal(before))

		By("Keystone refuses the service's update: an Error, named; Ready and Stalled of the KeystoneAPI unmoved")
		ks.FailNext(http.MethodPatch, "/v3/services", http.StatusForbidden)
		updateService(svcKey, func(s *keystonev1.KeystoneService) { s.Spec.ServiceDescription = "changed" })
		expectConditions(apiKey, condition{"Ready", "True", "Ready", ""},
			condition{"RegistrationsReady", "False", "ServiceFailed", "Error"})
		Expect(message(apiKey, "RegistrationsReady")).To(HavePrefix("KeystoneService glance: KeystoneServiceReady"))
		Expect(getAPI(apiKey)(Default).Status.Conditions.Get("Stalled")).To(BeNil())

		By("and back")
		updateService(svcKey, func(s *keystonev1.KeystoneService) { s.Spec.ServiceDescription = "changed again" })
		expectConditions(apiKey, condition{"RegistrationsReady", "True", "Ready", ""})
	})
})
