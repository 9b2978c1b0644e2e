package conformance

import (
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/domains"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/registeredlimits"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/roles"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/users"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	keystonev1 "github.com/openstack-k8s-operators/keystone-operator/api/v1beta1"
	osclient "github.com/openstack-k8s-operators/lib-common/modules/openstack"
	"k8s.io/utils/ptr"
)

// What today's service operators do with keystone-operator's API module beyond
// registering themselves, each written as that operator's controller calls it (read
// from their sources), against this operator and the real Keystone.
var _ = Describe("Service operators' personas", func() {
	var ns string
	var api *keystonev1.KeystoneAPI
	BeforeEach(func() {
		ns = newNamespace()
		api = externalKeystoneAPI(ns)
	})

	It("heat: the admin client creates a domain, a user in it and a domain role assignment", func() {
		heat := newConsumer(ns, "heat")
		os, res, err := keystonev1.GetAdminServiceClient(ctx, heat.h, api)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.IsZero()).To(BeTrue())
		domainID, err := os.CreateDomain(ctx, log, osclient.Domain{Name: "heat_" + ns, Description: "Owns users and projects created by heat"})
		Expect(err).NotTo(HaveOccurred())
		userID, err := os.CreateUser(ctx, log, osclient.User{Name: "heat_domain_admin", Password: "heat-domain-pw", DomainID: domainID})
		Expect(err).NotTo(HaveOccurred())
		Expect(os.AssignUserDomainRole(ctx, log, "admin", userID, domainID)).To(Succeed())

		kc := adminClient()
		DeferCleanup(func() {
			Expect(users.Delete(ctx, kc, userID).ExtractErr()).To(Succeed())
			_, err := domains.Update(ctx, kc, domainID, domains.UpdateOpts{Enabled: ptr.To(false)}).Extract()
			Expect(err).NotTo(HaveOccurred())
			Expect(domains.Delete(ctx, kc, domainID).ExtractErr()).To(Succeed())
		})
		u, err := users.Get(ctx, kc, userID).Extract()
		Expect(err).NotTo(HaveOccurred())
		Expect(u.DomainID).To(Equal(domainID))
		yes := true
		pages, err := roles.ListAssignments(kc, roles.ListAssignmentsOpts{UserID: userID, ScopeDomainID: domainID, IncludeNames: &yes}).AllPages(ctx)
		Expect(err).NotTo(HaveOccurred())
		assignments, err := roles.ExtractRoleAssignments(pages)
		Expect(err).NotTo(HaveOccurred())
		Expect(assignments).To(ContainElement(HaveField("Role.Name", "admin")), "the domain admin role assigned")
	})

	It("glance: the system-scoped admin client sets registered limits for its service", func() {
		glance := newConsumer(ns, "glance")
		ksSvc := glance.registerService(keystonev1.KeystoneServiceSpec{ServiceType: "image", ServiceName: "glance",
			Enabled: true, ServiceUser: "glance", Secret: "osp-secret", PasswordSelector: "GlancePassword"})
		os, _, err := keystonev1.GetAdminServiceClient(ctx, glance.h, api)
		Expect(err).NotTo(HaveOccurred())
		limitID, err := os.CreateOrUpdateRegisteredLimit(ctx, log, osclient.RegisteredLimit{ServiceID: ksSvc.GetServiceID(),
			RegionID: api.GetRegion(), ResourceName: "image_size_total", DefaultLimit: 1000, Description: "image size total"})
		Expect(err).NotTo(HaveOccurred())
		By("setting it again updates the same limit")
		again, err := os.CreateOrUpdateRegisteredLimit(ctx, log, osclient.RegisteredLimit{ServiceID: ksSvc.GetServiceID(),
			RegionID: api.GetRegion(), ResourceName: "image_size_total", DefaultLimit: 2000, Description: "image size total"})
		Expect(err).NotTo(HaveOccurred())
		Expect(again).To(Equal(limitID))
		limit, err := registeredlimits.Get(ctx, adminClient(), limitID).Extract()
		Expect(err).NotTo(HaveOccurred())
		Expect(limit.DefaultLimit).To(Equal(2000))
		Expect(limit.ServiceID).To(Equal(ksSvc.GetServiceID()))
		Expect(os.DeleteRegisteredLimit(ctx, log, limitID)).To(Succeed())
		glance.release(ksSvc)
	})

	It("octavia and designate: an admin client built from the KeystoneAPI's admin user, project, region and secret (the conformance Keystone serves http, so not its CA bundle)", func() {
		octavia := newConsumer(ns, "octavia")
		// Deprecated upstream, and still what octavia-operator and designate-operator call.
		os, _, err := keystonev1.GetScopedAdminServiceClient(ctx, octavia.h, api, //nolint:staticcheck // as they call it
			&gophercloud.AuthScope{ProjectName: api.Spec.AdminProject, DomainName: "Default"})
		Expect(err).NotTo(HaveOccurred())
		Expect(os.GetRegion()).To(Equal(api.Spec.Region))
		project, err := os.GetProject(ctx, log, api.Spec.AdminProject, "default")
		Expect(err).NotTo(HaveOccurred())
		Expect(project.Name).To(Equal(api.Spec.AdminProject))
	})

	It("telemetry: looks up roles, users and projects, and hashes the endpoint URLs of its services", func() {
		placement := newConsumer(ns, "placement")
		ksSvc := placement.registerService(keystonev1.KeystoneServiceSpec{ServiceType: "placement", ServiceName: "placement",
			Enabled: true, ServiceUser: "placement", Secret: "osp-secret", PasswordSelector: "PlacementPassword"})
		ep := placement.registerEndpoint("placement", "placement", map[string]string{"internal": "http://placement-internal:8778"})
		telemetry := newConsumer(ns, "telemetry")
		os, _, err := keystonev1.GetAdminServiceClient(ctx, telemetry.h, api)
		Expect(err).NotTo(HaveOccurred())
		role, err := os.GetRole(ctx, log, "service")
		Expect(err).NotTo(HaveOccurred())
		Expect(role.Name).To(Equal("service"))
		user, err := os.GetUser(ctx, log, "placement", "default")
		Expect(err).NotTo(HaveOccurred())
		Expect(user.Name).To(Equal("placement"))
		project, err := os.GetProject(ctx, log, "service", "default")
		Expect(err).NotTo(HaveOccurred())
		Expect(project.Name).To(Equal("service"))
		hash, err := keystonev1.GetHashforKeystoneEndpointUrlsForServices(ctx, telemetry.h, ns, ptr.To("internal"), []string{"placement"})
		Expect(err).NotTo(HaveOccurred())
		Expect(hash).NotTo(BeEmpty(), "the endpoints' status lists the URLs")
		placement.release(ksSvc, ep)
	})

	It("nova: the hash of several services' endpoint URLs changes exactly when one of those URLs does", func() {
		glance := newConsumer(ns, "glance")
		glanceSvc := glance.registerService(keystonev1.KeystoneServiceSpec{ServiceType: "image", ServiceName: "glance",
			Enabled: true, ServiceUser: "glance", Secret: "osp-secret", PasswordSelector: "GlancePassword"})
		glanceEp := glance.registerEndpoint("glance", "glance", map[string]string{"internal": "http://glance-internal:9292",
			"public": "https://glance.example.com"})
		placement := newConsumer(ns, "placement")
		placementSvc := placement.registerService(keystonev1.KeystoneServiceSpec{ServiceType: "placement", ServiceName: "placement",
			Enabled: true, ServiceUser: "placement", Secret: "osp-secret", PasswordSelector: "PlacementPassword"})
		placementEp := placement.registerEndpoint("placement", "placement", map[string]string{"internal": "http://placement-internal:8778"})
		other := newConsumer(ns, "neutron")
		otherSvc := other.registerService(keystonev1.KeystoneServiceSpec{ServiceType: "network", ServiceName: "neutron",
			Enabled: true, ServiceUser: "neutron", Secret: "osp-secret", PasswordSelector: "NovaPassword"})
		otherEp := other.registerEndpoint("neutron", "neutron", map[string]string{"internal": "http://neutron-internal:9696"})

		nova := newConsumer(ns, "nova")
		hashOf := func(g Gomega) string {
			h, err := keystonev1.GetHashforKeystoneEndpointUrlsForServices(ctx, nova.h, ns, ptr.To("internal"), []string{"glance", "placement"})
			g.Expect(err).NotTo(HaveOccurred())
			return h
		}
		before := hashOf(Default)
		Expect(before).NotTo(BeEmpty())

		By("another service's URL changes: the same hash")
		other.registerEndpoint("neutron", "neutron", map[string]string{"internal": "http://neutron-internal.moved:9696"})
		Consistently(hashOf).WithTimeout(2 * time.Second).Should(Equal(before))

		By("a public URL of one of the services changes: the same hash (nova reads internal URLs)")
		glance.registerEndpoint("glance", "glance", map[string]string{"internal": "http://glance-internal:9292",
			"public": "https://images.example.com"})
		Consistently(hashOf).WithTimeout(2 * time.Second).Should(Equal(before))

		By("glance's internal URL changes: another hash; back, the first again")
		glance.registerEndpoint("glance", "glance", map[string]string{"internal": "http://glance-internal.moved:9292",
			"public": "https://images.example.com"})
		Eventually(hashOf).ShouldNot(Equal(before))
		glance.registerEndpoint("glance", "glance", map[string]string{"internal": "http://glance-internal:9292",
			"public": "https://images.example.com"})
		Eventually(hashOf).Should(Equal(before))

		glance.release(glanceSvc, glanceEp)
		placement.release(placementSvc, placementEp)
		other.release(otherSvc, otherEp)
	})
})
