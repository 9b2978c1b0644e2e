package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	keystonev1 "github.com/openstack-k8s-operators/keystone-operator/api/v1beta1"
	k8s_errors "k8s.io/apimachinery/pkg/api/errors"
)

// registration is one KeystoneService of a service operator, and the KeystoneEndpoint
// (endpoint, "" for none) it makes for it, exactly as its controller builds them.
type registration struct {
	spec     keystonev1.KeystoneServiceSpec
	endpoint string
	// paths maps public and internal to the URL path after host and port.
	port  int
	paths string
}

// operatorPersona is what one operator of openstack-k8s-operators registers, read from
// its source at commit (docs/registrations.md has the same table).
type operatorPersona struct {
	operator, commit string
	registrations    []registration
}

// serviceSpec is a KeystoneService spec with the operator's defaults: osp-secret, enabled,
// no roles (none of them sets any: keystone-operator's admin and service).
func serviceSpec(serviceType, name, desc, user, selector string) keystonev1.KeystoneServiceSpec {
	return keystonev1.KeystoneServiceSpec{ServiceType: serviceType, ServiceName: name, ServiceDescription: desc, Enabled: true,
		ServiceUser: user, Secret: "osp-secret", PasswordSelector: selector}
}

// personas: every operator that registers in Keystone with keystone-operator's helpers,
// with its CRDs' defaults (serviceUser, passwordSelectors). heat and swift are in
// heat_swift_test.go; what operators do beyond registering is in personas_test.go.
var personas = []operatorPersona{
	{"barbican-operator", "200eaa2", []registration{
		{serviceSpec("key-manager", "barbican", "Barbican Service", "barbican", "BarbicanPassword"), "barbican-api", 9311, ""}}},
	{"cinder-operator", "4a60ed8", []registration{
		{serviceSpec("volumev3", "cinderv3", "Cinder V3 Service", "cinder", "CinderPassword"), "cinderv3", 8776, "/v3"}}},
	{"designate-operator", "bc820e1", []registration{
		{serviceSpec("dns", "designate", "Designate Service", "designate", "DesignatePassword"), "designate", 9001, "/"}}},
	{"glance-operator", "65990ce", []registration{
		{serviceSpec("image", "glance", "Glance Service", "glance", "GlancePassword"), "glance-default-single", 9292, ""}}},
	{"ironic-operator", "66f6112", []registration{
		{serviceSpec("baremetal", "ironic", "Ironic baremetal provisioning service", "ironic", "IronicPassword"), "ironic", 6385, ""},
		{serviceSpec("baremetal-introspection", "ironic-inspector", "OpenStack Baremetal-Introspection Service", "ironic-inspector",
			"IronicInspectorPassword"), "ironic-inspector", 5050, ""}}},
	// ManilaAPI registers v2 and the deprecated v1 under one user, as heat does.
	{"manila-operator", "649b42c", []registration{
		{serviceSpec("sharev2", "manilav2", "Manila V2 Service", "manila", "ManilaPassword"), "manilav2", 8786, "/v2"},
		{serviceSpec("share", "manila", "Manila V1 Service", "manila", "ManilaPassword"), "manila", 8786, "/v1/%(project_id)s"}}},
	{"neutron-operator", "756f4ac7", []registration{
		{serviceSpec("network", "neutron", "Openstack Networking", "neutron", "NeutronPassword"), "neutron", 9696, ""}}},
	// Placement moved into nova-operator, with Cyborg.
	{"nova-operator", "b3775364", []registration{
		{serviceSpec("compute", "nova", "Nova Compute Service", "nova", "NovaPassword"), "nova", 8774, "/v2.1"},
		{serviceSpec("placement", "placement", "Placement Service", "placement", "PlacementPassword"), "placement", 8778, ""},
		{serviceSpec("accelerator", "cyborg", "Cyborg Accelerator Lifecycle Management Service", "cyborg", "CyborgPassword"), "cyborg", 6666, "/v2"}}},
	{"octavia-operator", "82a7a50", []registration{
		{serviceSpec("load-balancer", "octavia", "Octavia Service", "octavia", "OctaviaPassword"), "octavia", 9876, ""}}},
	// Ceilometer registers a service without endpoints.
	{"telemetry-operator", "001a834", []registration{
		{serviceSpec("alarming", "aodh", "Aodh for autoscaling Service", "aodh", "AodhPassword"), "aodh", 8042, ""},
		{serviceSpec("Ceilometer", "ceilometer", "Ceilometer Service", "ceilometer", "CeilometerPassword"), "", 0, ""},
		{serviceSpec("rating", "cloudkitty", "CloudKitty V2 Service", "cloudkitty", "CloudKittyPassword"), "cloudkitty", 8889, ""}}},
	{"watcher-operator", "a795633", []registration{
		{serviceSpec("infra-optim", "watcher", "Watcher Service", "watcher", "WatcherPassword"), "watcher", 9322, ""}}},
}

var _ = Describe("Every operator that registers in Keystone, as its source does", func() {
	for _, p := range personas {
		It(p.operator+" at "+p.commit, func() {
			ns := newNamespace()
			externalKeystoneAPI(ns)
			passwords := map[string]string{}
			for _, r := range p.registrations {
				passwords[r.spec.PasswordSelector] = strings.ToLower(r.spec.PasswordSelector) + "-pw"
			}
			setPasswords(ns, passwords)
			op := newConsumer(ns, strings.TrimSuffix(p.operator, "-operator"))

			By("registering every service and its endpoints, each as its controller does")
			services := make([]*keystonev1.KeystoneServiceHelper, 0, len(p.registrations))
			var endpoints []*keystonev1.KeystoneEndpointHelper
			for _, r := range p.registrations {
				services = append(services, op.registerService(r.spec))
				if r.endpoint == "" {
					continue
				}
				urls := urlsOf(ns, r)
				endpoints = append(endpoints, op.registerEndpoint(r.endpoint, r.spec.ServiceName, urls))
				want := []string{"internal regionOne " + urls["internal"], "public regionOne " + urls["public"]}
				Expect(catalogOf(r.spec.ServiceName)).To(Equal(catalog{Services: 1, Type: r.spec.ServiceType, Endpoints: want}),
					"%s as written", r.spec.ServiceName)
			}
			for _, r := range p.registrations {
				Expect(canLogIn(r.spec.ServiceUser, passwords[r.spec.PasswordSelector])).To(BeTrue(), r.spec.ServiceUser)
				Expect(userRoles(r.spec.ServiceUser)).To(Equal([]string{"admin", "service"}), r.spec.ServiceUser)
			}

			By("horizon: finding a service by its KeystoneService's name (GetKeystoneServiceWithName)")
			first := p.registrations[0].spec.ServiceName
			found, err := keystonev1.GetKeystoneServiceWithName(ctx, op.h, first, ns)
			Expect(err).NotTo(HaveOccurred())
			Expect(found.Status.ServiceID).NotTo(BeEmpty())
			_, err = keystonev1.GetKeystoneServiceWithName(ctx, op.h, "not-"+first, ns)
			Expect(k8s_errors.IsNotFound(err)).To(BeTrue(), "horizon reads NotFound as 'not deployed': %v", err)

			By("letting everything go, as the operator's deletion does: nothing is left in Keystone")
			op.release(nil, endpoints...)
			for _, s := range services {
				op.release(s)
			}
			// The helpers return once they let go; the operator deregisters afterwards.
			for _, r := range p.registrations {
				Eventually(func() int { return catalogOf(r.spec.ServiceName).Services }).Should(BeZero(), r.spec.ServiceName)
				Eventually(func() []string { return userRoles(r.spec.ServiceUser) }).Should(BeNil(), "user %s", r.spec.ServiceUser)
			}
		})
	}
})

// urlsOf is what lib-common's GetAPIEndpoint gives the operator for r: its Service's
// name and port, and the path its controller appends.
func urlsOf(ns string, r registration) map[string]string {
	urls := map[string]string{}
	for _, iface := range []string{"public", "internal"} {
		urls[iface] = fmt.Sprintf("http://%s-%s.%s.svc:%d%s", r.spec.ServiceName, iface, ns, r.port, r.paths)
	}
	return urls
}

// personaRows are the rows docs/registrations.md has for personas: operator, commit
// read, and what it registers.
func personaRows() []string {
	rows := []string{}
	for _, p := range personas {
		var what []string
		for _, r := range p.registrations {
			what = append(what, fmt.Sprintf("%s (%s, user %s)", r.spec.ServiceName, r.spec.ServiceType, r.spec.ServiceUser))
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %s |", p.operator, p.commit, strings.Join(what, ", ")))
	}
	sort.Strings(rows)
	return rows
}

var _ = It("docs/registrations.md lists every persona as this suite plays it", func() {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "registrations.md"))
	Expect(err).NotTo(HaveOccurred())
	for _, row := range personaRows() {
		Expect(string(doc)).To(ContainSubstring(row))
	}
})
