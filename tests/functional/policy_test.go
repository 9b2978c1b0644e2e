package functional

import (
	"strings"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/tests/support/fakekeystone"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The KeystoneAPI's spec.registrationPolicy, on the fake Keystone: what each refusal
// says, that nothing is written to Keystone, and that a registration goes on once the
// KeystoneAPI allows it. tests/tenant tries the same as a tenant, on the real Keystone.
var _ = Describe("A KeystoneAPI's registration policy", func() {
	var (
		ns string
		ks *fakekeystone.Server
	)
	BeforeEach(func() {
		ns = newNamespace()
		ks = fakekeystone.New("admin", "secret-admin")
		DeferCleanup(ks.Close)
		api := externalKeystoneAPI(ns)
		api.Spec.Override.Service.Internal.EndpointURL = ptr.To(ks.URL)
		no := false
		api.Spec.RegistrationPolicy = &keystonev1.RegistrationPolicy{Roles: []string{"service"}, CreateRoles: &no,
			Services: []string{"image/tenant-a-*"}, Users: []string{"tenant-a-*"}}
		Expect(k8sClient.Create(ctx, api)).To(Succeed())
		createSecret(ns, "osp-secret", map[string]string{"AdminPassword": "secret-admin", "GlancePassword": "glance-1"})
		expectConditions(client.ObjectKeyFromObject(api), condition{"Ready", "True", "Ready", ""})
	})
	// writes counts the fake Keystone's requests that change something.
	writes := func() int {
		n := 0
		for req, count := range ks.Requests() {
			if !strings.HasPrefix(req, "GET ") && !strings.HasPrefix(req, "HEAD ") && !strings.HasPrefix(req, "POST /v3/auth") {
				n += count
			}
		}
		return n
	}

	It("refuses at InputReady what spec.registrationPolicy does not allow, writes nothing to Keystone, and goes on once the KeystoneAPI allows it", func() {
		svc := keystoneService(ns)
		svc.Name, svc.Spec.ServiceName, svc.Spec.ServiceUser = "tenant-a-glance", "tenant-a-glance", "glance"
		Expect(k8sClient.Create(ctx, svc)).To(Succeed())
		key := client.ObjectKeyFromObject(svc)
		message := func() string { return getService(key)(Default).Status.Conditions.Get("InputReady").Message }

		By("a user the KeystoneAPI does not allow")
		expectServiceConditions(key, condition{"Ready", "False", "NotAllowed", "Error"}, condition{"InputReady", "False", "NotAllowed", "Error"})
		Expect(message()).To(Equal("spec.serviceUser glance is not among the users KeystoneAPI keystone allows " +
			"(spec.registrationPolicy.users: [tenant-a-*]); nothing is written to Keystone"))

		By("keystone-operator's roles, admin among them")
		updateService(key, func(s *keystonev1.KeystoneService) { s.Spec.ServiceUser = "tenant-a-glance" })
		Eventually(message).Should(Equal("spec.roles asks for role admin, which KeystoneAPI keystone does not allow " +
			"(spec.registrationPolicy.roles: [service]); nothing is written to Keystone"))

		By("a role Keystone lacks, where roles may not be created")
		updateService(key, func(s *keystonev1.KeystoneService) { s.Spec.Roles = []string{"service"} })
		Eventually(message).Should(Equal("spec.roles asks for service, which Keystone lacks, and KeystoneAPI keystone does not " +
			"let its namespace create roles (spec.registrationPolicy.createRoles: false); nothing is written to Keystone"))
		Expect(writes()).To(BeZero(), "nothing written to Keystone: %v", ks.Requests())
		Expect(ks.List(fakekeystone.Roles, map[string]any{"name": "service"})).To(BeEmpty())

		By("the KeystoneAPI lets it create roles: registered with the role service only")
		setPolicy(ns, func(p *keystonev1.RegistrationPolicy) { p.CreateRoles = ptr.To(true) })
		expectServiceConditions(key, condition{"Ready", "True", "Ready", ""})
		Expect(ks.List(fakekeystone.Services, map[string]any{"name": "tenant-a-glance"})).To(HaveLen(1))

		By("a service the KeystoneAPI does not allow, and an application credential of a user it does not allow")
		other := keystoneService(ns)
		other.Name, other.Spec.ServiceName, other.Spec.ServiceType, other.Spec.ServiceUser = "nova", "nova", "compute", "tenant-a-nova"
		other.Spec.Roles = []string{"service"}
		Expect(k8sClient.Create(ctx, other)).To(Succeed())
		expectServiceConditions(client.ObjectKeyFromObject(other), condition{"InputReady", "False", "NotAllowed", "Error"})
		Expect(getService(client.ObjectKeyFromObject(other))(Default).Status.Conditions.Get("InputReady").Message).To(Equal(
			"spec.serviceType/spec.serviceName compute/nova is not among the services KeystoneAPI keystone allows " +
				"(spec.registrationPolicy.services: [image/tenant-a-*]); nothing is written to Keystone"))
		logins := ks.Requests()["POST /v3/auth"]
		ac := applicationCredential(ns)
		Expect(k8sClient.Create(ctx, ac)).To(Succeed())
		acKey := types.NamespacedName{Namespace: ns, Name: ac.Name}
		expectAppCredConditions(acKey, condition{"InputReady", "False", "NotAllowed", "Error"})
		Expect(getAppCred(acKey)(Default).Status.Conditions.Get("InputReady").Message).To(Equal(
			"spec.userName glance is not among the users KeystoneAPI keystone allows (spec.registrationPolicy.users: " +
				"[tenant-a-*]); nothing is written to Keystone"))
		Expect(ks.Requests()["POST /v3/auth"]).To(Equal(logins), "no password of glance tried")
	})

	// refusedEndpoint has KeystoneService name (of serviceType, serviceName name, user
	// user) adopt the service that exists, and KeystoneEndpoint name ask for urls under it,
	// which is refused (NotAllowed); it returns the KeystoneEndpoint's key and the
	// refusal's message.
	refusedEndpoint := func(name, serviceType, user string, urls map[string]string) (types.NamespacedName, string) {
		GinkgoHelper()
		svc := keystoneService(ns)
		svc.Name, svc.Spec.ServiceType, svc.Spec.ServiceName, svc.Spec.ServiceUser = name, serviceType, name, user
		Expect(k8sClient.Create(ctx, svc)).To(Succeed())
		expectServiceConditions(client.ObjectKeyFromObject(svc), condition{"Ready", "True", "Ready", ""})
		ep := keystoneEndpoint(ns)
		ep.Name, ep.Spec.ServiceName, ep.Spec.Endpoints = name, name, urls
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		epKey := client.ObjectKeyFromObject(ep)
		expectEndpointConditions(epKey, condition{"KeystoneServiceOSEndpointsReady", "False", "NotAllowed", "Error"})
		return epKey, getEndpoint(epKey)(Default).Status.Conditions.Get("KeystoneServiceOSEndpointsReady").Message
	}
	// plantIdentityEndpoint is refusedEndpoint of an attacker's URL under the identity
	// service keystone.
	plantIdentityEndpoint := func(user string) (types.NamespacedName, string) {
		GinkgoHelper()
		return refusedEndpoint("keystone", "identity", user, map[string]string{"public": "http://attacker.example:5000"})
	}

	It("lets endpoints go under a service the namespace adopted only where spec.registrationPolicy.adoptedServiceEndpoints lists it", func() {
		setPolicy(ns, func(p *keystonev1.RegistrationPolicy) { *p = keystonev1.RegistrationPolicy{} })
		identityID := ks.Create(fakekeystone.Services, map[string]any{"type": "identity", "name": "keystone", "enabled": true})
		epKey, refusal := plantIdentityEndpoint("tenant-a")
		Expect(refusal).To(Equal(
			"service identity/keystone (" + identityID + ") existed in Keystone before KeystoneService keystone adopted it: " +
				"endpoints go only under a service this namespace registered, or one KeystoneAPI keystone lists " +
				"(spec.registrationPolicy.adoptedServiceEndpoints: none); its endpoints of earlier versions stay, never " +
				"rewritten nor removed; nothing is written to Keystone"))
		Expect(endpointsIn(ks, identityID)).To(BeEmpty())

		By("listed: the endpoint goes there")
		setPolicy(ns, func(p *keystonev1.RegistrationPolicy) { p.AdoptedServiceEndpoints = []string{"identity/keystone"} })
		expectEndpointConditions(epKey, condition{"Ready", "True", "Ready", ""})
		Expect(endpointsIn(ks, identityID)).To(ConsistOf("public http://attacker.example:5000"))
	})

	It("with no registrationPolicy (keystone-operator's schema prunes it), lets endpoints go under an adopted service, as keystone-operator does, but not under an identity service", func() {
		dropPolicy(ns)
		// Another region on keystone-operator registered image/glance (docs/multiregion.md):
		// unmarked, as lib-common creates it.
		glanceID := ks.Create(fakekeystone.Services, map[string]any{"type": "image", "name": "glance", "enabled": true})
		identityID := ks.Create(fakekeystone.Services, map[string]any{"type": "identity", "name": "keystone", "enabled": true})
		glance := keystoneService(ns)
		Expect(k8sClient.Create(ctx, glance)).To(Succeed())
		expectServiceConditions(client.ObjectKeyFromObject(glance), condition{"Ready", "True", "Ready", ""})
		Expect(k8sClient.Create(ctx, keystoneEndpoint(ns))).To(Succeed())
		expectEndpointConditions(types.NamespacedName{Namespace: ns, Name: "glance"}, condition{"Ready", "True", "Ready", ""})
		Expect(endpointsIn(ks, glanceID)).To(HaveLen(len(glanceEndpoints)), "its endpoints under the adopted service")

		By("beside an endpoint of its interface and region that is not its own (made by hand): refused, naming it, until it goes")
		placementID := ks.Create(fakekeystone.Services, map[string]any{"type": "placement", "name": "placement", "enabled": true})
		byHand := foreignEndpoint(ks, placementID, "public", "http://by-hand:8778")
		placementKey, refusal := refusedEndpoint("placement", "placement", "placement",
			map[string]string{"public": "http://placement:8778", "internal": "http://placement-internal:8778"})
		Expect(refusal).To(Equal(
			"service " + placementID + " of KeystoneService placement: the service has a public endpoint in regionOne already (" +
				byHand + ", http://by-hand:8778; no mark), which is never rewritten: a second would leave clients to take " +
				"either; remove it, or list this one there yourself; nothing is written to Keystone"))
		Expect(endpointsIn(ks, placementID)).To(Equal(map[string]string{byHand: "public http://by-hand:8778"}),
			"neither interface created, the other endpoint untouched")
		ks.Delete(fakekeystone.Endpoints, byHand)
		update(placementKey, &keystonev1.KeystoneEndpoint{}, touchAnnotation)
		expectEndpointConditions(placementKey, condition{"Ready", "True", "Ready", ""})
		Expect(endpointsIn(ks, placementID)).To(HaveLen(2))

		By("an identity service: refused, saying what the KeystoneAPI allows")
		_, refusal = plantIdentityEndpoint("keystone-user")
		Expect(refusal).To(ContainSubstring(
			"or one KeystoneAPI keystone lists (no spec.registrationPolicy: every service but an identity service)"))
		Expect(endpointsIn(ks, identityID)).To(BeEmpty())
	})
})
