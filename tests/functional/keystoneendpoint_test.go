package functional

import (
	"net/http"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/tests/support/fakekeystone"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// expectEndpointConditions waits until the KeystoneEndpoint's conditions include want.
func expectEndpointConditions(key types.NamespacedName, want ...condition) {
	GinkgoHelper()
	expectObservedConditions(key, &keystonev1.KeystoneEndpoint{}, func(e *keystonev1.KeystoneEndpoint) (lc.Conditions, int64) {
		return e.Status.Conditions, e.Status.ObservedGeneration
	}, want...)
}

// foreignEndpoint registers an endpoint of the service as another client of Keystone would.
func foreignEndpoint(ks *fakekeystone.Server, serviceID, iface, url string) string {
	return foreignEndpointIn(ks, "regionOne", serviceID, iface, url)
}

// foreignEndpointIn is foreignEndpoint in region.
func foreignEndpointIn(ks *fakekeystone.Server, region, serviceID, iface, url string) string {
	return ks.Create(fakekeystone.Endpoints, map[string]any{"service_id": serviceID, "interface": iface,
		"region": region, "region_id": region, "url": url})
}

func updateEndpoint(key types.NamespacedName, mutate func(*keystonev1.KeystoneEndpoint)) {
	GinkgoHelper()
	update(key, &keystonev1.KeystoneEndpoint{}, mutate)
}

// endpointsIn returns the fake Keystone's endpoints of a service as "interface url", by ID.
func endpointsIn(ks *fakekeystone.Server, serviceID string) map[string]string {
	out := map[string]string{}
	for _, e := range ks.List(fakekeystone.Endpoints, map[string]any{"service_id": serviceID}) {
		out[e["id"].(string)] = e["interface"].(string) + " " + e["url"].(string)
	}
	return out
}

func gone(key types.NamespacedName, obj client.Object) func() bool {
	return func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, key, obj)) }
}

var _ = Describe("KeystoneEndpoint", func() {
	var (
		ns     string
		ks     *fakekeystone.Server
		key    types.NamespacedName
		svcKey types.NamespacedName
	)
	// keystone makes the namespace's KeystoneAPI an external one at the fake Keystone.
	keystone := func() {
		api := externalKeystoneAPI(ns)
		api.Spec.Override.Service.Internal.EndpointURL = ptr.To(ks.URL)
		Expect(k8sClient.Create(ctx, api)).To(Succeed())
		createSecret(ns, "osp-secret", map[string]string{"AdminPassword": "secret-admin", "GlancePassword": "glance-1"})
		expectConditions(client.ObjectKeyFromObject(api), condition{"Ready", "True", "Ready", ""})
	}
	service := func() string {
		Expect(k8sClient.Create(ctx, keystoneService(ns))).To(Succeed())
		expectServiceConditions(svcKey, condition{"Ready", "True", "Ready", ""})
		return getService(svcKey)(Default).Status.ServiceID
	}
	BeforeEach(func() {
		ns = newNamespace()
		ks = fakekeystone.New("admin", "secret-admin")
		DeferCleanup(ks.Close)
		key = types.NamespacedName{Namespace: ns, Name: "glance"}
		svcKey = key
	})

	It("walks every step forward, each with its reason and severity, and registers exactly the spec", func() {
		Expect(k8sClient.Create(ctx, keystoneEndpoint(ns))).To(Succeed())
		By("no KeystoneAPI yet")
		expectEndpointConditions(key,
			condition{"Ready", "False", "DependencyNotFound", "Warning"},
			condition{"KeystoneAPIReady", "False", "DependencyNotFound", "Warning"},
			condition{"KeystoneServiceReady", "Unknown", "Init", ""},
			condition{"KeystoneServiceOSEndpointsReady", "Unknown", "Init", ""})
		Expect(getEndpoint(key)(Default).Status.Conditions.Get("Ready").Message).To(
			Equal("KeystoneAPIReady (0/3 ready): no KeystoneAPI in namespace " + ns))

		By("the KeystoneAPI is Ready: the KeystoneService is missing")
		keystone()
		expectEndpointConditions(key,
			condition{"KeystoneAPIReady", "True", "Ready", ""},
			condition{"KeystoneServiceReady", "False", "DependencyNotFound", "Warning"})

		By("the KeystoneService exists but is not registered yet: waiting, mirrored")
		svc := keystoneService(ns)
		svc.Spec.PasswordSelector = "MissingPassword"
		Expect(k8sClient.Create(ctx, svc)).To(Succeed())
		Eventually(func(g Gomega) {
			c := getEndpoint(key)(g).Status.Conditions.Get("KeystoneServiceReady")
			g.Expect(c.Status).To(BeEquivalentTo("False"))
			g.Expect(c.Reason).To(BeEquivalentTo("DependencyNotFound"))
			g.Expect(c.Message).To(HavePrefix("KeystoneService glance: InputReady"), "mirrors the service's blocking step")
		}).Should(Succeed())
		Expect(ks.List(fakekeystone.Endpoints, nil)).To(BeEmpty())

		By("the service registers: the endpoints follow")
		updateService(svcKey, func(s *keystonev1.KeystoneService) { s.Spec.PasswordSelector = "GlancePassword" })
		expectEndpointConditions(key,
			condition{"Ready", "True", "Ready", ""},
			condition{"KeystoneAPIReady", "True", "Ready", ""},
			condition{"KeystoneServiceReady", "True", "Ready", ""},
			condition{"KeystoneServiceOSEndpointsReady", "True", "Ready", ""})
		Expect(eventReasons(ns, "glance")).NotTo(ContainElement("EndpointCreated"),
			"Keystone's answer to the creation confirms the step: no round shows it as still in progress")
		ep := getEndpoint(key)(Default)
		serviceID := getService(svcKey)(Default).Status.ServiceID
		Expect(ep.Status.ServiceID).To(Equal(serviceID))
		eps := ks.List(fakekeystone.Endpoints, map[string]any{"service_id": serviceID})
		Expect(eps).To(HaveLen(2))
		urls := map[string]string{}
		for _, e := range eps {
			iface := e["interface"].(string)
			urls[iface] = e["url"].(string)
			Expect(e["region_id"]).To(Equal("regionOne"))
			Expect(e[identity.OwnerAttribute]).To(HaveSuffix(string(ep.UID)+"@"+clusterID()), "marked as this KeystoneEndpoint's, in this cluster")
			Expect(ep.Status.EndpointIDs).To(HaveKeyWithValue(iface, e["id"]))
		}
		Expect(urls).To(Equal(glanceEndpoints))
		Expect(ep.Status.Endpoints).To(Equal([]keystonev1.Endpoint{
			{Interface: "internal", URL: glanceEndpoints["internal"], ID: ep.Status.EndpointIDs["internal"], Region: "regionOne"},
			{Interface: "public", URL: glanceEndpoints["public"], ID: ep.Status.EndpointIDs["public"], Region: "regionOne"},
		}), "each endpoint with the region it is in")
		Expect(getService(svcKey)(Default).Finalizers).To(ContainElement("keystone.openstack.org/keystoneendpoint-glance"))
		expectRelated(endpointRelated(key), &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "glance"}})
		api := getAPI(types.NamespacedName{Namespace: ns, Name: "keystone"})(Default)
		Expect(api.Finalizers).NotTo(ContainElement(ContainSubstring("keystoneendpoint")),
			"the KeystoneService it holds keeps the KeystoneAPI")
		Expect(kubectl("-n", ns, "get", "keystoneendpoint", "glance")).To(MatchRegexp(`glance\s+glance\s+True\s+Ready\s+all 3 steps ready`))
		Expect(kstatusOfObject(getEndpoint(key)(Default))).To(Equal(status.CurrentStatus))
		Expect(gauge("KeystoneEndpoint", ns, "glance", "KeystoneServiceOSEndpointsReady", "True")).To(BeEquivalentTo(1))

		By("back: the KeystoneAPI's admin password stops working, the KeystoneEndpoint mirrors its Error")
		ks.SetPassword("admin", "rotated-elsewhere")
		update(types.NamespacedName{Namespace: ns, Name: "keystone"}, &keystonev1.KeystoneAPI{}, touchAnnotation)
		expectEndpointConditions(key,
			condition{"Ready", "False", "InvalidInput", "Error"},
			condition{"KeystoneAPIReady", "False", "InvalidInput", "Error"},
			condition{"Stalled", "True", "InvalidInput", ""})
		Expect(kstatusOfObject(getEndpoint(key)(Default))).To(Equal(status.FailedStatus))
		ks.SetPassword("admin", "secret-admin")
		update(types.NamespacedName{Namespace: ns, Name: "keystone"}, &keystonev1.KeystoneAPI{}, touchAnnotation)
		expectEndpointConditions(key, condition{"Ready", "True", "Ready", ""})

		By("back: the KeystoneService stalls, the KeystoneEndpoint mirrors it")
		ks.FailNext(http.MethodPatch, "/v3/services", http.StatusForbidden)
		updateService(svcKey, func(s *keystonev1.KeystoneService) { s.Spec.ServiceDescription = "changed" })
		expectEndpointConditions(key,
			condition{"Ready", "False", "ServiceFailed", "Error"},
			condition{"KeystoneServiceReady", "False", "ServiceFailed", "Error"})
		updateService(svcKey, func(s *keystonev1.KeystoneService) { s.Spec.ServiceDescription = "changed again" })
		expectEndpointConditions(key, condition{"Ready", "True", "Ready", ""})
	})

	It("updates a changed URL and deletes an interface the spec no longer lists, and only its own", func() {
		keystone()
		serviceID := service()
		foreign := foreignEndpoint(ks, serviceID, "admin", "http://someone-else:9292")
		Expect(k8sClient.Create(ctx, keystoneEndpoint(ns))).To(Succeed())
		expectEndpointConditions(key, condition{"Ready", "True", "Ready", ""})
		updateEndpoint(key, func(e *keystonev1.KeystoneEndpoint) {
			delete(e.Spec.Endpoints, "public")
			e.Spec.Endpoints["internal"] = "http://glance-internal.new:9292"
		})
		Eventually(func(g Gomega) {
			ep := getEndpoint(key)(g)
			g.Expect(endpointsIn(ks, serviceID)).To(Equal(map[string]string{
				ep.Status.EndpointIDs["internal"]: "internal http://glance-internal.new:9292",
				foreign:                           "admin http://someone-else:9292",
			}))
			g.Expect(ep.Status.EndpointIDs).To(HaveLen(1))
		}).Should(Succeed())
		expectEndpointConditions(key, condition{"Ready", "True", "Ready", ""})
	})

	It("lets several KeystoneEndpoints of one service coexist, as glance registers one per API", func() {
		keystone()
		serviceID := service()
		internal := keystoneEndpoint(ns)
		internal.Name = "glance-internal"
		internal.Spec.Endpoints = map[string]string{"internal": "http://glance-internal.openstack.svc:9292"}
		public := keystoneEndpoint(ns)
		public.Name = "glance-public"
		public.Spec.Endpoints = map[string]string{"public": "https://glance.example.com"}
		Expect(k8sClient.Create(ctx, internal)).To(Succeed())
		Expect(k8sClient.Create(ctx, public)).To(Succeed())
		expectEndpointConditions(client.ObjectKeyFromObject(internal), condition{"Ready", "True", "Ready", ""})
		expectEndpointConditions(client.ObjectKeyFromObject(public), condition{"Ready", "True", "Ready", ""})
		Expect(endpointsIn(ks, serviceID)).To(ConsistOf("internal http://glance-internal.openstack.svc:9292", "public https://glance.example.com"))
		for i := 0; i < 3; i++ {
			update(client.ObjectKeyFromObject(internal), &keystonev1.KeystoneEndpoint{}, touchAnnotation)
			update(client.ObjectKeyFromObject(public), &keystonev1.KeystoneEndpoint{}, touchAnnotation)
		}
		Consistently(func() map[string]string { return endpointsIn(ks, serviceID) }, time.Second).Should(HaveLen(2),
			"neither deletes the other's endpoint")

		By("deleting one leaves the other's endpoint")
		Expect(k8sClient.Delete(ctx, public)).To(Succeed())
		Eventually(gone(client.ObjectKeyFromObject(public), &keystonev1.KeystoneEndpoint{})).Should(BeTrue())
		Expect(endpointsIn(ks, serviceID)).To(ConsistOf("internal http://glance-internal.openstack.svc:9292"))
	})

	It("finds its own endpoint after a crash before the status write, and creates no duplicate", func() {
		keystone()
		svc := keystoneService(ns)
		svc.Spec.PasswordSelector = "NotYet"
		Expect(k8sClient.Create(ctx, svc)).To(Succeed())
		Expect(k8sClient.Create(ctx, keystoneEndpoint(ns))).To(Succeed())
		expectEndpointConditions(key, condition{"KeystoneServiceReady", "False", "DependencyNotFound", "Warning"})
		ep := getEndpoint(key)(Default)

		By("the service exists in Keystone with an endpoint this KeystoneEndpoint created, its ID never recorded")
		serviceID := ks.Create(fakekeystone.Services, map[string]any{"type": "image", "name": "glance", "enabled": true,
			identity.OwnerAttribute: identity.OwnerMark("KeystoneService", getService(svcKey)(Default), clusterID())})
		orphan := ks.Create(fakekeystone.Endpoints, map[string]any{"service_id": serviceID, "interface": "public",
			"region": "regionOne", "region_id": "regionOne", "url": "https://glance.old.example.com",
			identity.OwnerAttribute: "KeystoneEndpoint/" + ns + "/glance/" + string(ep.UID)})
		updateService(svcKey, func(s *keystonev1.KeystoneService) { s.Spec.PasswordSelector = "GlancePassword" })
		expectEndpointConditions(key, condition{"Ready", "True", "Ready", ""})
		Expect(getService(svcKey)(Default).Status.ServiceID).To(Equal(serviceID), "the service its KeystoneService made")
		Expect(getEndpoint(key)(Default).Status.EndpointIDs).To(HaveKeyWithValue("public", orphan))
		Expect(endpointsIn(ks, serviceID)).To(HaveLen(2))
		Expect(endpointsIn(ks, serviceID)).To(HaveKeyWithValue(orphan, "public https://glance.example.com"))

		By("a second endpoint marked as its own is a duplicate: removed")
		duplicate := ks.Create(fakekeystone.Endpoints, map[string]any{"service_id": serviceID, "interface": "public",
			"region": "regionOne", "region_id": "regionOne", "url": "https://glance.example.com",
			identity.OwnerAttribute: "KeystoneEndpoint/" + ns + "/glance/" + string(ep.UID)})
		update(key, &keystonev1.KeystoneEndpoint{}, touchAnnotation)
		Eventually(func() map[string]string { return endpointsIn(ks, serviceID) }).ShouldNot(HaveKey(duplicate))
		Expect(endpointsIn(ks, serviceID)).To(HaveKey(orphan))
	})

	It("warns while Keystone is down, and recovers without duplicates", func() {
		keystone()
		serviceID := service()
		Expect(k8sClient.Create(ctx, keystoneEndpoint(ns))).To(Succeed())
		expectEndpointConditions(key, condition{"Ready", "True", "Ready", ""})
		ks.Fail(http.StatusServiceUnavailable)
		update(key, &keystonev1.KeystoneEndpoint{}, touchAnnotation)
		expectEndpointConditions(key,
			condition{"Ready", "False", "ServiceUnavailable", "Warning"},
			condition{"KeystoneServiceOSEndpointsReady", "False", "ServiceUnavailable", "Warning"})
		ks.Heal()
		expectEndpointConditions(key, condition{"Ready", "True", "Ready", ""})
		Expect(endpointsIn(ks, serviceID)).To(HaveLen(2))
	})

	It("stalls on a request Keystone refuses, and retries on a spec change", func() {
		keystone()
		service()
		ks.FailNext(http.MethodPost, "/v3/endpoints", http.StatusBadRequest)
		Expect(k8sClient.Create(ctx, keystoneEndpoint(ns))).To(Succeed())
		expectEndpointConditions(key,
			condition{"Ready", "False", "EndpointFailed", "Error"},
			condition{"KeystoneServiceOSEndpointsReady", "False", "EndpointFailed", "Error"},
			condition{"Stalled", "True", "EndpointFailed", ""})
		Expect(getEndpoint(key)(Default).Status.Conditions.Get("KeystoneServiceOSEndpointsReady").Message).To(ContainSubstring("Bad Request"))
		updateEndpoint(key, func(e *keystonev1.KeystoneEndpoint) { e.Spec.Endpoints["admin"] = "http://glance-admin:9292" })
		expectEndpointConditions(key, condition{"Ready", "True", "Ready", ""})
	})

	It("performs no Kubernetes write when converged", func() {
		keystone()
		service()
		Expect(k8sClient.Create(ctx, keystoneEndpoint(ns))).To(Succeed())
		expectEndpointConditions(key, condition{"Ready", "True", "Ready", ""})
		before := settledWrites(ns)
		for i := 0; i < 5; i++ {
			reconciledAfter("keystoneendpoint", func() { update(key, &keystonev1.KeystoneEndpoint{}, touchAnnotation) })
		}
		Consistently(func() map[string]int64 { return writesIn(ns) }, 2*time.Second).Should(Equal(before))
	})

	It("removes only its endpoints on deletion and releases the KeystoneService and the KeystoneAPI", func() {
		keystone()
		serviceID := service()
		foreign := foreignEndpoint(ks, serviceID, "public", "http://someone-else:9292")
		Expect(k8sClient.Create(ctx, keystoneEndpoint(ns))).To(Succeed())
		expectEndpointConditions(key, condition{"Ready", "True", "Ready", ""})
		Expect(endpointsIn(ks, serviceID)).To(HaveLen(3))
		Expect(k8sClient.Delete(ctx, getEndpoint(key)(Default))).To(Succeed())
		Eventually(gone(key, &keystonev1.KeystoneEndpoint{})).Should(BeTrue())
		Expect(endpointsIn(ks, serviceID)).To(Equal(map[string]string{foreign: "public http://someone-else:9292"}))
		Expect(getService(svcKey)(Default).Finalizers).NotTo(ContainElement(ContainSubstring("keystoneendpoint")))
		Expect(getAPI(types.NamespacedName{Namespace: ns, Name: "keystone"})(Default).Finalizers).NotTo(
			ContainElement(ContainSubstring("keystoneendpoint")))
	})

	It("keeps a deleted KeystoneService until its endpoints are removed, then lets it go", func() {
		keystone()
		serviceID := service()
		Expect(k8sClient.Create(ctx, keystoneEndpoint(ns))).To(Succeed())
		expectEndpointConditions(key, condition{"Ready", "True", "Ready", ""})
		Expect(k8sClient.Delete(ctx, getService(svcKey)(Default))).To(Succeed())
		Eventually(gone(svcKey, &keystonev1.KeystoneService{})).Should(BeTrue())
		expectEndpointConditions(key, condition{"KeystoneServiceReady", "False", "DependencyNotFound", "Warning"})
		Expect(ks.List(fakekeystone.Services, nil)).To(BeEmpty())
		Expect(endpointsIn(ks, serviceID)).To(BeEmpty())
	})

	It("removes its endpoints from an external Keystone before the KeystoneAPI goes, where the service stays", func() {
		keystone()
		// An adopted service stays in Keystone: its endpoints go only if the KeystoneEndpoint
		// removes them. The KeystoneAPI lets endpoints go under it (they go nowhere else).
		setPolicy(ns, func(p *keystonev1.RegistrationPolicy) { p.AdoptedServiceEndpoints = []string{"image/glance"} })
		serviceID := ks.Create(fakekeystone.Services, map[string]any{"type": "image", "name": "glance", "enabled": true})
		Expect(service()).To(Equal(serviceID))
		// Another region's: under a service it adopted, none of its endpoints goes beside
		// another's of the same interface and region.
		foreign := foreignEndpointIn(ks, "regionTwo", serviceID, "public", "http://someone-else:9292")
		Expect(k8sClient.Create(ctx, keystoneEndpoint(ns))).To(Succeed())
		expectEndpointConditions(key, condition{"Ready", "True", "Ready", ""})
		apiKey := types.NamespacedName{Namespace: ns, Name: "keystone"}
		By("while Keystone refuses to remove the endpoints, the KeystoneService keeps the KeystoneAPI and says why")
		ks.FailEvery(http.MethodDelete, "/v3/endpoints", http.StatusServiceUnavailable)
		Expect(k8sClient.Delete(ctx, getAPI(apiKey)(Default))).To(Succeed())
		Eventually(func(g Gomega) {
			c := getService(svcKey)(g).Status.Conditions.Get("KeystoneAPIReady")
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Message).To(Equal("KeystoneAPI keystone is being deleted: waiting for KeystoneEndpoints glance to remove their endpoints"))
		}).Should(Succeed())
		Consistently(gone(apiKey, &keystonev1.KeystoneAPI{}), 2*time.Second).Should(BeFalse())
		By("Keystone answers again: the endpoints go, then the KeystoneAPI")
		ks.Heal()
		Eventually(gone(apiKey, &keystonev1.KeystoneAPI{})).Should(BeTrue())
		Expect(endpointsIn(ks, serviceID)).To(Equal(map[string]string{foreign: "public http://someone-else:9292"}),
			"only this KeystoneEndpoint's endpoints removed, before the KeystoneAPI went")
		Expect(ks.List(fakekeystone.Services, map[string]any{"id": serviceID})).To(HaveLen(1), "the adopted service stays")
		expectEndpointConditions(key, condition{"KeystoneAPIReady", "False", "DependencyNotFound", "Warning"})
		Expect(getService(svcKey)(Default).Finalizers).NotTo(ContainElement(ContainSubstring("keystoneendpoint")))
	})

	It("releases keystone-operator's finalizers too, so objects from before the switch can be deleted", func() {
		keystone()
		service()
		ep := keystoneEndpoint(ns)
		ep.Finalizers = []string{"openstack.org/keystoneendpoint"}
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		expectEndpointConditions(key, condition{"Ready", "True", "Ready", ""})
		for _, obj := range []client.Object{getService(svcKey)(Default), getAPI(types.NamespacedName{Namespace: ns, Name: "keystone"})(Default)} {
			obj.SetFinalizers(append(obj.GetFinalizers(), "openstack.org/keystoneendpoint-glance"))
			Expect(k8sClient.Update(ctx, obj)).To(Succeed())
		}
		Expect(k8sClient.Delete(ctx, getEndpoint(key)(Default))).To(Succeed())
		Eventually(gone(key, &keystonev1.KeystoneEndpoint{})).Should(BeTrue())
		Expect(getService(svcKey)(Default).Finalizers).NotTo(ContainElement("openstack.org/keystoneendpoint-glance"))
	})

	It("moves to the KeystoneService a changed serviceName names and lets go of the previous one", func() {
		keystone()
		oldID := service()
		Expect(k8sClient.Create(ctx, keystoneEndpoint(ns))).To(Succeed())
		expectEndpointConditions(key, condition{"Ready", "True", "Ready", ""})
		next := keystoneService(ns)
		next.Name, next.Spec.ServiceName, next.Spec.ServiceType, next.Spec.ServiceUser = "glance-next", "glance-next", "image-next", "glance-next"
		Expect(k8sClient.Create(ctx, next)).To(Succeed())
		nextKey := client.ObjectKeyFromObject(next)
		expectServiceConditions(nextKey, condition{"Ready", "True", "Ready", ""})
		updateEndpoint(key, func(ep *keystonev1.KeystoneEndpoint) { ep.Spec.ServiceName = "glance-next" })
		expectEndpointConditions(key, condition{"Ready", "True", "Ready", ""})
		newID := getService(nextKey)(Default).Status.ServiceID
		Expect(endpointsIn(ks, newID)).To(HaveLen(2))
		Expect(endpointsIn(ks, oldID)).To(BeEmpty())
		Eventually(func(g Gomega) {
			g.Expect(getService(svcKey)(g).Finalizers).NotTo(ContainElement(ContainSubstring("keystoneendpoint")))
		}).Should(Succeed(), "the previous KeystoneService is released")
		By("the previous KeystoneService can be deleted")
		Expect(k8sClient.Delete(ctx, getService(svcKey)(Default))).To(Succeed())
		Eventually(gone(svcKey, &keystonev1.KeystoneService{})).Should(BeTrue())
		Expect(getService(nextKey)(Default).Finalizers).To(ContainElement(ContainSubstring("keystoneendpoint")))
	})

	It("lets a deleted KeystoneService go while the KeystoneAPI is not ready, with the cleanup credentials", func() {
		keystone()
		serviceID := service()
		Expect(k8sClient.Create(ctx, keystoneEndpoint(ns))).To(Succeed())
		expectEndpointConditions(key, condition{"Ready", "True", "Ready", ""})
		By("the admin Secret goes: KeystoneAPIReady is False everywhere")
		Expect(k8sClient.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "osp-secret"}})).To(Succeed())
		expectEndpointConditions(key, condition{"KeystoneAPIReady", "False", "DependencyNotFound", "Warning"})
		Expect(k8sClient.Delete(ctx, getService(svcKey)(Default))).To(Succeed())
		Eventually(gone(svcKey, &keystonev1.KeystoneService{})).Should(BeTrue())
		Expect(endpointsIn(ks, serviceID)).To(BeEmpty())
		Expect(ks.List(fakekeystone.Services, nil)).To(BeEmpty())
	})

	It("never hangs when everything in the namespace is deleted at once", func() {
		keystone()
		service()
		Expect(k8sClient.Create(ctx, keystoneEndpoint(ns))).To(Succeed())
		expectEndpointConditions(key, condition{"Ready", "True", "Ready", ""})
		apiKey := types.NamespacedName{Namespace: ns, Name: "keystone"}
		Expect(k8sClient.Delete(ctx, getAPI(apiKey)(Default))).To(Succeed())
		Expect(k8sClient.Delete(ctx, getService(svcKey)(Default))).To(Succeed())
		Expect(k8sClient.Delete(ctx, getEndpoint(key)(Default))).To(Succeed())
		Eventually(gone(key, &keystonev1.KeystoneEndpoint{})).Should(BeTrue())
		Eventually(gone(svcKey, &keystonev1.KeystoneService{})).Should(BeTrue())
		Eventually(gone(apiKey, &keystonev1.KeystoneAPI{})).Should(BeTrue())
		Expect(ks.List(fakekeystone.Services, nil)).To(BeEmpty(), "external mode: Keystone stays, so the registration is removed")
		Expect(ks.List(fakekeystone.Endpoints, nil)).To(BeEmpty())
	})
})
