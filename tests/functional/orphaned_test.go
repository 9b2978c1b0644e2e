package functional

import (
	"net/http"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/tests/support/fakekeystone"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// No deletion waits on an object that does not exist: finalizers left by a registration
// removed without releasing them (its own finalizer stripped by hand, or put there by
// another operator) are released, with a Warning Event naming each.
var _ = Describe("A deletion held by an object that is gone", func() {
	var (
		ns string
		ks *fakekeystone.Server
	)
	BeforeEach(func() {
		ns = newNamespace()
		ks = readyAtFakeKeystone(ns, map[string]string{"GlancePassword": "glance-1"})
	})
	gone := func(obj client.Object) func() bool {
		return func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), obj)) }
	}
	// addFinalizers puts finalizers on obj, as a registration that is gone left them.
	addFinalizers := func(obj client.Object, fs ...string) {
		GinkgoHelper()
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
			obj.SetFinalizers(append(obj.GetFinalizers(), fs...))
			g.Expect(k8sClient.Update(ctx, obj)).To(Succeed())
		}).Should(Succeed())
	}

	// readyService creates the namespace's glance KeystoneService and waits until it is Ready.
	readyService := func() (*keystonev1.KeystoneService, types.NamespacedName) {
		GinkgoHelper()
		svc := keystoneService(ns)
		Expect(k8sClient.Create(ctx, svc)).To(Succeed())
		key := client.ObjectKeyFromObject(svc)
		expectServiceConditions(key, condition{"Ready", "True", "Ready", ""})
		return svc, key
	}

	It("a KeystoneAPI held by registrations that do not exist is deleted", func() {
		api := &keystonev1.KeystoneAPI{}
		key := types.NamespacedName{Namespace: ns, Name: "keystone"}
		Expect(k8sClient.Get(ctx, key, api)).To(Succeed())
		addFinalizers(api, "keystone.openstack.org/keystoneservice-ghost", "openstack.org/keystoneendpoint-ghost",
			"keystone.openstack.org/keystoneapplicationcredential-ghost")
		Expect(k8sClient.Delete(ctx, api)).To(Succeed())
		Eventually(gone(api)).Should(BeTrue())
		Eventually(func() []string { return eventReasons(ns, "keystone") }).Should(ContainElement("FinalizerReleased"))
	})

	It("a KeystoneAPI still waits for a registration that exists", func() {
		readyService()
		api := &keystonev1.KeystoneAPI{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keystone"}, api)).To(Succeed())
		Expect(k8sClient.Delete(ctx, api)).To(Succeed())
		Eventually(gone(api)).Should(BeTrue(), "the KeystoneService lets it go")
		Expect(ks.List(fakekeystone.Services, map[string]any{"type": "image"})).To(BeEmpty(), "after deregistering")
	})

	It("a KeystoneService held by a KeystoneEndpoint that is gone is deleted, whether it went before or after the deletion began", func() {
		svc, key := readyService()
		// "manual" exists and names another service, so nothing of it ever releases the
		// hold put on the KeystoneService in its name; "ghost" does not exist.
		manual := keystoneEndpoint(ns)
		manual.Name, manual.Spec.ServiceName = "manual", "not-glance"
		Expect(k8sClient.Create(ctx, manual)).To(Succeed())
		// Its first round done before the hold is put there: a later one would release a
		// hold on a service it does not name (releaseUnused), and nothing wakes it again.
		Eventually(func(g Gomega) {
			g.Expect(getEndpoint(client.ObjectKeyFromObject(manual))(g).Status.Conditions.Get("Ready")).NotTo(BeNil())
		}).Should(Succeed())
		addFinalizers(svc, "keystone.openstack.org/keystoneendpoint-ghost", "keystone.openstack.org/keystoneendpoint-manual")

		By("deleting the KeystoneService: the ghost's hold is released, the existing KeystoneEndpoint's waited for")
		Expect(k8sClient.Delete(ctx, svc)).To(Succeed())
		expectServiceConditions(key, condition{"KeystoneServiceReady", "False", "Requested", "Info"})
		Eventually(func() []string { return getService(key)(Default).Finalizers }).ShouldNot(
			ContainElement("keystone.openstack.org/keystoneendpoint-ghost"))
		Expect(getService(key)(Default).Finalizers).To(ContainElement("keystone.openstack.org/keystoneendpoint-manual"))

		By("that KeystoneEndpoint goes without releasing it: its deletion wakes the KeystoneService, which goes")
		Expect(k8sClient.Delete(ctx, manual)).To(Succeed())
		Eventually(gone(manual)).Should(BeTrue())
		Eventually(gone(svc)).Should(BeTrue())
		Eventually(func() []string { return eventReasons(ns, "glance") }).Should(ContainElement("FinalizerReleased"))
		Expect(ks.List(fakekeystone.Services, map[string]any{"type": "image"})).To(BeEmpty(), "deregistered")
	})

	It("a KeystoneService held by a KeystoneEndpoint whose deletion was forced is woken by that deletion and goes", func() {
		svc, key := readyService()
		ep := keystoneEndpoint(ns)
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		epKey := client.ObjectKeyFromObject(ep)
		expectEndpointConditions(epKey, condition{"Ready", "True", "Ready", ""})
		Expect(getService(key)(Default).Finalizers).To(ContainElement("keystone.openstack.org/keystoneendpoint-glance"))

		By("Keystone refuses to remove endpoints: the KeystoneEndpoint's deletion stops before it releases the KeystoneService")
		ks.FailEvery(http.MethodDelete, "/v3/endpoints", http.StatusServiceUnavailable)
		Expect(k8sClient.Delete(ctx, ep)).To(Succeed())
		Expect(k8sClient.Delete(ctx, svc)).To(Succeed())
		expectServiceConditions(key, condition{"KeystoneServiceReady", "False", "Requested", "Info"})
		Expect(getService(key)(Default).Finalizers).To(ContainElement("keystone.openstack.org/keystoneendpoint-glance"))

		By("an admin strips the KeystoneEndpoint's own finalizers: it goes without releasing its hold, and only its deletion event says so")
		Eventually(func(g Gomega) {
			stuck := getEndpoint(epKey)(g)
			stuck.Finalizers = nil
			g.Expect(k8sClient.Update(ctx, stuck)).To(Succeed())
		}).Should(Succeed())
		Eventually(gone(ep)).Should(BeTrue())
		ks.Heal()
		Eventually(gone(svc)).Should(BeTrue(), "woken by the KeystoneEndpoint's deletion (wakeHeld), the hold released, the service deregistered")
		Expect(ks.List(fakekeystone.Services, map[string]any{"type": "image"})).To(BeEmpty(), "deregistered")
		Eventually(func(g Gomega) {
			events := &corev1.EventList{}
			g.Expect(k8sClient.List(ctx, events, client.InNamespace(ns))).To(Succeed())
			var released []string
			for _, e := range events.Items {
				if e.InvolvedObject.Kind == "KeystoneService" && e.Reason == "FinalizerReleased" {
					released = append(released, e.Message)
				}
			}
			g.Expect(released).To(ContainElement(ContainSubstring("keystone.openstack.org/keystoneendpoint-glance")))
		}).Should(Succeed())
	})
})
