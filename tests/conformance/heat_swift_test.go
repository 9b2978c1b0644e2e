package conformance

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	keystonev1 "github.com/openstack-k8s-operators/keystone-operator/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// heat-operator (read at e29bb0b, 2026-08-22) and swift-operator (10ad742, 2026-07-22) as
// their controllers register: every value below is theirs.
var _ = Describe("heat and swift, as their operators register", func() {
	var ns string
	BeforeEach(func() {
		ns = newNamespace()
		externalKeystoneAPI(ns)
		setPasswords(ns, map[string]string{"HeatPassword": "heat-pw", "SwiftPassword": "swift-pw"})
	})

	It("heat: HeatAPI and HeatCfnAPI share the user heat, with %(tenant_id)s endpoints; the user goes with the last of them", func() {
		// internal/controller/heatapi_controller.go and heatcfnapi_controller.go: one
		// KeystoneService each, serviceUser and password from the Heat CR (defaults heat,
		// osp-secret, HeatPassword), and a KeystoneEndpoint named after the service.
		heatAPI, heatCfnAPI := newConsumer(ns, "heat-api"), newConsumer(ns, "heat-cfnapi")
		spec := func(serviceType, name, desc string) keystonev1.KeystoneServiceSpec {
			return keystonev1.KeystoneServiceSpec{ServiceType: serviceType, ServiceName: name, ServiceDescription: desc,
				Enabled: true, ServiceUser: "heat", Secret: "osp-secret", PasswordSelector: "HeatPassword"}
		}
		heatURLs := map[string]string{
			"public":   "http://heat-api-public." + ns + ".svc:8004/v1/%(tenant_id)s",
			"internal": "http://heat-api-internal." + ns + ".svc:8004/v1/%(tenant_id)s",
		}
		cfnURLs := map[string]string{
			"public":   "http://heat-cfnapi-public." + ns + ".svc:8000/v1",
			"internal": "http://heat-cfnapi-internal." + ns + ".svc:8000/v1",
		}
		// Both operators reconcile at the same moment: neither waits for the other.
		heatSvc := keystonev1.NewKeystoneService(spec("orchestration", "heat", "Heat API service"), ns, map[string]string{"service": "heat"}, 10*time.Second)
		cfnSvc := keystonev1.NewKeystoneService(spec("cloudformation", "heat-cfn", "Heat CloudFormation API service"), ns,
			map[string]string{"service": "heat-cfn"}, 10*time.Second)
		Eventually(func(g Gomega) {
			heatAPI.reconcileService(g, heatSvc)
			heatCfnAPI.reconcileService(g, cfnSvc)
		}).Should(Succeed())
		heatEp := heatAPI.registerEndpoint("heat", "heat", heatURLs)
		heatCfnAPI.registerEndpoint("heat-cfn", "heat-cfn", cfnURLs)
		Expect(catalogOf("heat")).To(Equal(catalog{Services: 1, Type: "orchestration", Endpoints: []string{
			"internal regionOne " + heatURLs["internal"], "public regionOne " + heatURLs["public"]}}), "stored as heat wrote them")
		Expect(catalogOf("heat-cfn").Endpoints).To(HaveLen(2))
		Expect(userRoles("heat")).To(Equal([]string{"admin", "service"}))
		Expect(canLogIn("heat", "heat-pw")).To(BeTrue())

		By("HeatCfnAPI goes (heat's reconcileDelete drops its finalizers; the garbage collector deletes what it owned)")
		heatRelease(heatCfnAPI, &keystonev1.KeystoneEndpoint{}, "heat-cfn")
		heatRelease(heatCfnAPI, &keystonev1.KeystoneService{}, "heat-cfn")
		Expect(catalogOf("heat-cfn").Services).To(BeZero())
		Expect(canLogIn("heat", "heat-pw")).To(BeTrue(), "the user heat still authenticates")
		Consistently(func(g Gomega) { heatAPI.reconcileService(g, heatSvc) }, 3*time.Second).Should(Succeed(),
			"HeatAPI's KeystoneService stays Ready")
		Expect(heatEp.GetEndpointIDs()).To(HaveLen(2))

		By("HeatAPI goes too: nothing of heat is left")
		heatRelease(heatAPI, &keystonev1.KeystoneEndpoint{}, "heat")
		heatRelease(heatAPI, &keystonev1.KeystoneService{}, "heat")
		Expect(catalogOf("heat").Services).To(BeZero())
		Expect(userRoles("heat")).To(BeNil(), "the user is gone with the last KeystoneService naming it")
	})

	It("swift: the object-store's endpoints carry AUTH_%(tenant_id)s", func() {
		// internal/controller/swiftproxy_controller.go: serviceUser swift, SwiftPassword,
		// one KeystoneEndpoint named swift.
		swift := newConsumer(ns, "swift-proxy")
		svc := swift.registerService(keystonev1.KeystoneServiceSpec{ServiceType: "object-store", ServiceName: "swift",
			ServiceDescription: "Swift Object Storage", Enabled: true, ServiceUser: "swift", Secret: "osp-secret",
			PasswordSelector: "SwiftPassword"})
		urls := map[string]string{
			"public":   "http://swift-public." + ns + ".svc:8080/v1/AUTH_%(tenant_id)s",
			"internal": "http://swift-internal." + ns + ".svc:8080/v1/AUTH_%(tenant_id)s",
		}
		ep := swift.registerEndpoint("swift", "swift", urls)
		Expect(catalogOf("swift")).To(Equal(catalog{Services: 1, Type: "object-store", Endpoints: []string{
			"internal regionOne " + urls["internal"], "public regionOne " + urls["public"]}}))
		Expect(canLogIn("swift", "swift-pw")).To(BeTrue())
		swift.release(svc, ep)
		// The helpers return once they let go; the operator deregisters afterwards.
		Eventually(func() int { return catalogOf("swift").Services }).Should(BeZero())
		Eventually(func() []string { return userRoles("swift") }).Should(BeNil())
	})
})

// heatRelease does what heat-operator's reconcileDelete and the garbage collector do to
// a KeystoneService or KeystoneEndpoint its CR owned: the consumer's finalizer removed,
// then the object deleted; it waits until the operator has let it go.
func heatRelease(c consumer, obj client.Object, name string) {
	GinkgoHelper()
	obj.SetNamespace(c.owner.Namespace)
	obj.SetName(name)
	Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
		if controllerutil.RemoveFinalizer(obj, c.h.GetFinalizer()) {
			g.Expect(k8sClient.Update(ctx, obj)).To(Succeed())
		}
	}).Should(Succeed())
	Expect(k8sClient.Delete(ctx, obj)).To(Succeed())
	Eventually(gone(obj), timeout).Should(BeTrue())
}

// setPasswords adds keys to the namespace's osp-secret.
func setPasswords(ns string, data map[string]string) {
	GinkgoHelper()
	secret := &corev1.Secret{}
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "osp-secret"}, secret)).To(Succeed())
	for k, v := range data {
		secret.Data[k] = []byte(v)
	}
	Expect(k8sClient.Update(ctx, secret)).To(Succeed())
}
