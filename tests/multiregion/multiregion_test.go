// Package multiregion runs two control planes, each an API server with this operator
// and its own cluster identity, sharing one real Keystone: regionOne and regionTwo, each
// with placement in its openstack namespace, as a multi-region cloud is built on
// keystone-operator's externalKeystoneAPI.
package multiregion

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/endpoints"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/regions"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/roles"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/services"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/users"
	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/cmd/manager"
	"github.com/keystone-stepwise/keystone-operator/internal/access"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/tests/support/controlplane"
	"github.com/keystone-stepwise/keystone-operator/tests/support/keystoneadmin"
	"github.com/keystone-stepwise/keystone-operator/tests/support/localkeystone"
	"github.com/keystone-stepwise/keystone-operator/tests/support/upstream"
	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

const (
	adminPassword = "admin-Pa55word"
	namespace     = "openstack"
	wait          = time.Minute
	poll          = 200 * time.Millisecond
	// recheck is each operator's --region-recheck: what the other cluster does is seen
	// by that periodic read of Keystone alone, as in production (a minute there).
	recheck = 2 * time.Second
)

// keystone starts the one real Keystone both regions share (regionOne made by its
// bootstrap), stopped when t ends.
func keystone(t *testing.T) *localkeystone.Stack {
	t.Helper()
	logf.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	api := &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Namespace: "shared"},
		Spec: keystonev1.KeystoneAPISpec{ContainerImage: "keystone", Secret: "osp-secret", DatabaseInstance: "openstack",
			DatabaseAccount: "keystone", MemcachedInstance: "memcached", Region: "regionOne", AdminProject: "admin", AdminUser: "admin",
			PasswordSelectors: keystonev1.PasswordSelector{Admin: "AdminPassword"}, FernetMaxActiveKeys: ptr.To[int32](5)}}
	dir, err := os.MkdirTemp("", "multiregion-keystone-")
	if err != nil {
		t.Fatal(err)
	}
	stack, err := localkeystone.StartStack(ctx, dir, api, adminPassword)
	controlplane.Unavailable(t, err)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stack.Stop()
		_ = os.RemoveAll(dir)
	})
	return stack
}

// sharedKeystone starts the Keystone both regions share, makes the regions named there
// (regionOne exists), and returns its URL and an admin's client of it.
func sharedKeystone(t *testing.T, regionNames ...string) (string, *gophercloud.ServiceClient) {
	t.Helper()
	url := keystone(t).Keystone.URL()
	kc := admin(t, url)
	for _, name := range regionNames {
		if _, err := regions.Create(context.Background(), kc, regions.CreateOpts{ID: name}).Extract(); err != nil {
			t.Fatalf("creating region %s: %v", name, err)
		}
	}
	return url, kc
}

// region is one control plane: an API server, this operator running there with the
// permissions config/rbac generates and the cluster identity cluster, and, in namespace
// openstack, an external KeystoneAPI in the region name.
type region struct {
	name, cluster string
	c             client.Client
	stop          func()
}

// startRegion starts region name's control plane, with placement's password password.
func startRegion(t *testing.T, name, cluster, keystoneURL, password string) *region {
	t.Helper()
	g := NewWithT(t)
	root, err := controlplane.RepoRoot()
	g.Expect(err).NotTo(HaveOccurred())
	env, err := controlplane.Environment(root)
	controlplane.Unavailable(t, err)
	g.Expect(err).NotTo(HaveOccurred())
	cfg, err := env.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	opCfg, err := controlplane.AsOperator(ctx, cfg, root)
	g.Expect(err).NotTo(HaveOccurred())
	mgr, err := manager.New(opCfg, manager.Options{MetricsAddr: "0", ProbeAddr: "0", Isolated: true, ClusterID: cluster,
		RegionRecheck: recheck})
	g.Expect(err).NotTo(HaveOccurred())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
		}
	}
	t.Cleanup(stop)
	c, err := client.New(cfg, client.Options{Scheme: manager.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	r := &region{name: name, cluster: cluster, c: c, stop: stop}
	g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})).To(Succeed())
	g.Expect(c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "osp-secret"},
		StringData: map[string]string{"AdminPassword": adminPassword, "PlacementPassword": password}})).To(Succeed())
	// As openstack-operator writes it for a region on a central Keystone
	// (keystone.template.externalKeystoneAPI, override URLs, region).
	api := &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "keystone"},
		Spec: keystonev1.KeystoneAPISpec{ExternalKeystoneAPI: true, ContainerImage: "unused", Secret: "osp-secret",
			Region: name, AdminUser: "admin", AdminProject: "admin", PasswordSelectors: keystonev1.PasswordSelector{Admin: "AdminPassword"}}}
	api.Spec.Override.Service = &keystonev1.ServiceOverrides{
		Public:   &keystonev1.EndpointOverride{EndpointURL: ptr.To(keystoneURL)},
		Internal: &keystonev1.EndpointOverride{EndpointURL: ptr.To(keystoneURL)},
	}
	g.Expect(c.Create(ctx, api)).To(Succeed())
	return r
}

// register creates placement's KeystoneService and KeystoneEndpoint with this region's
// URLs, as placement-operator's PlacementAPI controller writes them (its ksSvcSpec:
// type and name placement, "Placement Service", enabled, the spec's serviceUser, secret
// and service password selector; labelled service: placement; the endpoints named
// after the PlacementAPI).
func (r *region) register(t *testing.T) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	labels := map[string]string{"service": "placement"}
	g.Expect(r.c.Create(ctx, &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "placement", Labels: labels},
		Spec: keystonev1.KeystoneServiceSpec{ServiceType: "placement", ServiceName: "placement", ServiceDescription: "Placement Service",
			Enabled: ptr.To(true), ServiceUser: "placement", Secret: "osp-secret", PasswordSelector: "PlacementPassword"}})).To(Succeed())
	g.Expect(r.c.Create(ctx, &keystonev1.KeystoneEndpoint{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "placement", Labels: labels},
		Spec: keystonev1.KeystoneEndpointSpec{ServiceName: "placement", Endpoints: r.urls()}})).To(Succeed())
}

// urls are placement's URLs in the region.
func (r *region) urls() map[string]string {
	return map[string]string{"public": "https://placement." + r.name + ".example.com",
		"internal": "http://placement-internal." + r.name + ".svc:8778"}
}

// conditions reads obj's conditions.
func (r *region) conditions(g Gomega, obj client.Object) lc.Conditions {
	g.Expect(r.c.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: obj.GetName()}, obj)).To(Succeed())
	switch o := obj.(type) {
	case *keystonev1.KeystoneAPI:
		return o.Status.Conditions
	case *keystonev1.KeystoneService:
		return o.Status.Conditions
	case *keystonev1.KeystoneEndpoint:
		return o.Status.Conditions
	}
	return nil
}

// expect waits until obj's condition t has status and reason, and returns its message.
func (r *region) expect(t *testing.T, obj client.Object, ct lc.Type, status corev1.ConditionStatus, reason string) string {
	t.Helper()
	var msg string
	NewWithT(t).Eventually(func(g Gomega) {
		conditions := r.conditions(g, obj)
		c := conditions.Get(ct)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(status), "%s %s: %s", r.name, ct, c.Message)
		g.Expect(string(c.Reason)).To(Equal(reason), "%s %s: %s", r.name, ct, c.Message)
		msg = c.Message
	}, wait, poll).Should(Succeed())
	return msg
}

func (r *region) ready(t *testing.T, obj client.Object) {
	t.Helper()
	r.expect(t, obj, lc.ReadyCondition, corev1.ConditionTrue, "Ready")
}

func svc() *keystonev1.KeystoneService {
	return &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Name: "placement"}}
}
func ep() *keystonev1.KeystoneEndpoint {
	return &keystonev1.KeystoneEndpoint{ObjectMeta: metav1.ObjectMeta{Name: "placement"}}
}
func api() *keystonev1.KeystoneAPI {
	return &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Name: "keystone"}}
}

// deregister deletes the region's KeystoneEndpoint and KeystoneService, and waits until
// both are gone.
func (r *region) deregister(t *testing.T) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	for _, obj := range []client.Object{ep(), svc()} {
		obj.SetNamespace(namespace)
		g.Expect(r.c.Delete(ctx, obj)).To(Succeed())
		g.Eventually(func() bool {
			return apierrors.IsNotFound(r.c.Get(ctx, client.ObjectKeyFromObject(obj), obj))
		}, wait, poll).Should(BeTrue(), "%s %T gone", r.name, obj)
	}
}

// lastGoes deregisters the region, the last owner of placement: its service, endpoints
// and user are gone from Keystone.
func (r *region) lastGoes(t *testing.T, kc *gophercloud.ServiceClient) {
	t.Helper()
	r.deregister(t)
	gone := read(t, kc)
	g := NewWithT(t)
	g.Expect(gone.services).To(BeEmpty(), "the last owner deletes the service")
	g.Expect(gone.endpoints).To(BeEmpty())
	g.Expect(gone.users).To(BeEmpty(), "the last owner deletes the user")
}

// keepsAlone waits until the region sees, at its next read of Keystone, that it keeps
// placement's service alone (another region's departure cannot be watched).
func (r *region) keepsAlone(t *testing.T) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		conditions := r.conditions(g, svc())
		g.Expect(conditions.Get(keystonev1.KeystoneServiceServiceReady).Message).NotTo(ContainSubstring("shared"))
	}, wait, poll).Should(Succeed(), "%s sees at its next read that it keeps placement", r.name)
}

// setPolicy changes the registration policy of the region's KeystoneAPI (what its
// namespace's registrations may obtain in Keystone).
func (r *region) setPolicy(t *testing.T, change func(*keystonev1.RegistrationPolicy)) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		api := &keystonev1.KeystoneAPI{}
		g.Expect(r.c.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: "keystone"}, api)).To(Succeed())
		if api.Spec.RegistrationPolicy == nil {
			api.Spec.RegistrationPolicy = &keystonev1.RegistrationPolicy{}
		}
		change(api.Spec.RegistrationPolicy)
		g.Expect(r.c.Update(context.Background(), api)).To(Succeed())
	}, wait, poll).Should(Succeed())
}

// setRoles sets the roles the region's KeystoneService asks for (none: the default).
func (r *region) setRoles(t *testing.T, roles ...string) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		s := &keystonev1.KeystoneService{}
		g.Expect(r.c.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: "placement"}, s)).To(Succeed())
		s.Spec.Roles = roles
		g.Expect(r.c.Update(context.Background(), s)).To(Succeed())
	}, wait, poll).Should(Succeed())
}

// assigned are the names of the roles the user placement has on the project service.
func assigned(t *testing.T, kc *gophercloud.ServiceClient) []string {
	t.Helper()
	ctx := context.Background()
	pages, err := users.List(kc, users.ListOpts{DomainID: "default", Name: "placement"}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found, err := users.ExtractUsers(pages)
	if err != nil || len(found) != 1 {
		t.Fatalf("user placement: %v (%d found)", err, len(found))
	}
	yes := true
	pages, err = roles.ListAssignments(kc, roles.ListAssignmentsOpts{UserID: found[0].ID, IncludeNames: &yes}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	list, err := roles.ExtractRoleAssignments(pages)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range list {
		if a.Scope.Project.Name == "service" {
			names = append(names, a.Role.Name)
		}
	}
	return names
}

// admin is an identity client of the shared Keystone as its admin.
func admin(t *testing.T, url string) *gophercloud.ServiceClient {
	t.Helper()
	return clientAs(t, url, "admin", adminPassword, "admin")
}

// clientAs authenticates user at url (scoped to project, none when "").
func clientAs(t *testing.T, url, user, password, project string) *gophercloud.ServiceClient {
	t.Helper()
	c, err := keystoneadmin.Client(context.Background(), url, nil, user, password, project)
	if err != nil {
		t.Fatalf("authenticating %s: %v", user, err)
	}
	return c
}

// canLogin tells whether user authenticates at url with password.
func canLogin(url, user, password string) bool {
	return keystoneadmin.Login(context.Background(), url, nil, user, password) == nil
}

// catalog is what Keystone holds of placement: its services, their endpoints (region ->
// interface -> URL), and its users with their owners of record.
type catalog struct {
	services  []string
	endpoints map[string]map[string]string
	users     []map[string]any
}

func read(t *testing.T, kc *gophercloud.ServiceClient) catalog {
	t.Helper()
	ctx := context.Background()
	out := catalog{endpoints: map[string]map[string]string{}}
	pages, err := services.List(kc, services.ListOpts{ServiceType: "placement"}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	all, err := services.ExtractServices(pages)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		out.services = append(out.services, s.ID)
		epPages, err := endpoints.List(kc, endpoints.ListOpts{ServiceID: s.ID}).AllPages(ctx)
		if err != nil {
			t.Fatal(err)
		}
		eps, err := endpoints.ExtractEndpoints(epPages)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range eps {
			if out.endpoints[e.Region] == nil {
				out.endpoints[e.Region] = map[string]string{}
			}
			out.endpoints[e.Region][string(e.Availability)] = e.URL
		}
	}
	userPages, err := users.List(kc, users.ListOpts{DomainID: "default", Name: "placement"}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var found []map[string]any
	if err := userPages.(users.UserPage).ExtractIntoSlicePtr(&found, "users"); err != nil {
		t.Fatal(err)
	}
	out.users = found
	return out
}

// located is placement's public URL a client of the region finds in the catalog of a
// token of placement's user, as gophercloud locates an endpoint by region.
func located(t *testing.T, url, password, regionName string) string {
	t.Helper()
	provider, err := openstack.AuthenticatedClient(context.Background(), gophercloud.AuthOptions{IdentityEndpoint: url + "/v3/",
		Username: "placement", Password: password, DomainName: "Default",
		Scope: &gophercloud.AuthScope{ProjectName: "service", DomainName: "Default"}})
	if err != nil {
		t.Fatalf("authenticating placement: %v", err)
	}
	found, err := provider.EndpointLocator(gophercloud.EndpointOpts{Type: "placement", Region: regionName,
		Availability: gophercloud.AvailabilityPublic})
	if err != nil {
		t.Fatalf("locating placement in %s: %v", regionName, err)
	}
	return strings.TrimSuffix(found, "/")
}

// TestTwoRegionsShareOneKeystone: two control planes register placement in one
// Keystone, one service and one user for both, each region's endpoints its own; a
// missing region is said with the command to make it; another password is a
// PasswordConflict that breaks nothing; each deletion removes that region's part only,
// and the last removes everything.
func TestTwoRegionsShareOneKeystone(t *testing.T) {
	g := NewWithT(t)
	url, kc := sharedKeystone(t)

	one := startRegion(t, "regionOne", "cluster-one", url, "placement-pw")
	two := startRegion(t, "regionTwo", "cluster-two", url, "another-pw")

	t.Log("regionTwo does not exist in Keystone yet: said, with the command to make it")
	one.ready(t, api())
	msg := two.expect(t, api(), keystonev1.KeystoneAPIEndpointReady, corev1.ConditionFalse, "DependencyNotFound")
	g.Expect(msg).To(ContainSubstring("has no region regionTwo"))
	g.Expect(msg).To(ContainSubstring("openstack region create regionTwo"))
	_, err := regions.Create(context.Background(), kc, regions.CreateOpts{ID: "regionTwo"}).Extract()
	g.Expect(err).NotTo(HaveOccurred())
	two.ready(t, api())

	t.Log("regionOne registers placement; regionTwo joins it, with another password: refused, nothing broken")
	one.register(t)
	one.ready(t, svc())
	one.ready(t, ep())
	two.register(t)
	msg = two.expect(t, svc(), keystonev1.KeystoneServiceUserReady, corev1.ConditionFalse, "PasswordConflict")
	g.Expect(msg).To(ContainSubstring("user placement has a password set by KeystoneService/openstack/placement of the cluster cluster-one"))
	g.Expect(canLogin(url, "placement", "placement-pw")).To(BeTrue(), "regionOne's login still works")
	g.Expect(canLogin(url, "placement", "another-pw")).To(BeFalse(), "regionTwo's password was never written")
	g.Expect(read(t, kc).users[0][identity.OwnersAttribute]).To(Or(BeNil(), Not(HaveKey(HaveSuffix("@cluster-two")))),
		"without the password, regionTwo is not among the owners: it could otherwise keep the user after regionOne")

	t.Log("regionTwo's Secret holds the shared password: both Ready, one service, each region's endpoints")
	g.Eventually(func(gg Gomega) {
		s := &corev1.Secret{}
		gg.Expect(two.c.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: "osp-secret"}, s)).To(Succeed())
		s.StringData = map[string]string{"PlacementPassword": "placement-pw"}
		gg.Expect(two.c.Update(context.Background(), s)).To(Succeed())
	}, wait, poll).Should(Succeed())
	two.ready(t, svc())
	two.ready(t, ep())
	g.Expect(two.expect(t, svc(), keystonev1.KeystoneServiceServiceReady, corev1.ConditionTrue, "Ready")).To(
		ContainSubstring("shared with the other regions: kept by KeystoneService placement"))
	now := read(t, kc)
	g.Expect(now.services).To(HaveLen(1), "one catalog entry for both regions")
	g.Expect(now.endpoints).To(Equal(map[string]map[string]string{"regionOne": one.urls(), "regionTwo": two.urls()}))
	g.Expect(now.users).To(HaveLen(1), "one user for both regions")
	g.Expect(now.users[0][identity.OwnerAttribute]).To(HavePrefix("KeystoneService/openstack/placement/"))
	g.Expect(now.users[0][identity.OwnerAttribute]).To(HaveSuffix("@cluster-one"), "regionOne keeps it")
	g.Expect(now.users[0][identity.OwnersAttribute]).To(HaveKey(HaveSuffix("@cluster-two")), "regionTwo among its owners, in Keystone itself")
	for _, r := range []*region{one, two} {
		g.Expect(located(t, url, "placement-pw", r.name)).To(Equal(r.urls()["public"]), "a client of %s finds its region's URL", r.name)
		var e keystonev1.KeystoneEndpoint
		g.Expect(r.c.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: "placement"}, &e)).To(Succeed())
		g.Expect(e.Status.Endpoints).To(HaveEach(HaveField("Region", r.name)), "the status says which region")
	}

	t.Log("regionTwo asks for one more role: the user has the union, which regionOne, its keeper, keeps")
	g.Expect(assigned(t, kc)).To(ConsistOf("admin", "service"))
	two.setPolicy(t, func(p *keystonev1.RegistrationPolicy) { p.Roles = []string{"admin", "service", "reader"} })
	two.setRoles(t, "admin", "service", "reader")
	g.Eventually(func() []string { return assigned(t, kc) }, wait, poll).Should(ConsistOf("admin", "service", "reader"))
	g.Consistently(func() []string { return assigned(t, kc) }, 3*recheck, poll).Should(ConsistOf("admin", "service", "reader"),
		"regionOne's rechecks keep the role regionTwo asks for")
	t.Log("regionTwo no longer asks for it: regionOne revokes it at its next look")
	two.setRoles(t)
	g.Eventually(func() []string { return assigned(t, kc) }, wait, poll).Should(ConsistOf("admin", "service"))

	t.Log("regionOne goes: regionTwo keeps working, its endpoints and the user stay")
	one.deregister(t)
	left := read(t, kc)
	g.Expect(left.services).To(Equal(now.services))
	g.Expect(left.endpoints).To(Equal(map[string]map[string]string{"regionTwo": two.urls()}))
	g.Expect(left.users).To(HaveLen(1))
	g.Expect(left.users[0][identity.OwnerAttribute]).To(HaveSuffix("@cluster-two"), "handed to regionTwo")
	g.Expect(canLogin(url, "placement", "placement-pw")).To(BeTrue())
	g.Expect(located(t, url, "placement-pw", "regionTwo")).To(Equal(two.urls()["public"]))
	two.keepsAlone(t)
	two.ready(t, svc())

	t.Log("the last region goes: everything goes")
	two.lastGoes(t, kc)
}

// TestKeystoneOperatorRegionJoined: a region keystone-operator registered (its
// service, user and endpoints unmarked, as lib-common's helpers create them) is joined by
// a region on this suite, which adopts them, adds its endpoints (its KeystoneAPI has no
// spec.registrationPolicy, as openstack-operator's, with keystone-operator's schema,
// leaves it: endpoints go under every adopted service but an identity service) and
// leaves them as they were; once that region switches to this suite too (claiming on
// keystone-operator's proof), the two share them as any two regions do.
func TestKeystoneOperatorRegionJoined(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	url, kc := sharedKeystone(t, "regionTwo")

	t.Log("regionOne as keystone-operator registered it: service, user and endpoints, none marked")
	one := &region{name: "regionOne"}
	service, err := services.Create(ctx, kc, services.CreateOpts{Type: "placement",
		Extra: map[string]any{"name": "placement", "description": "Placement Service"}}).Extract()
	g.Expect(err).NotTo(HaveOccurred())
	user, err := users.Create(ctx, kc, users.CreateOpts{Name: "placement", DomainID: "default", Password: "placement-pw"}).Extract()
	g.Expect(err).NotTo(HaveOccurred())
	for iface, u := range one.urls() {
		_, err := endpoints.Create(ctx, kc, endpoints.CreateOpts{Availability: gophercloud.Availability(iface), Region: "regionOne",
			URL: u, ServiceID: service.ID}).Extract()
		g.Expect(err).NotTo(HaveOccurred())
	}

	t.Log("regionTwo on this suite, its KeystoneAPI as openstack-operator writes it: uses them as they are, adds its endpoints")
	two := startRegion(t, "regionTwo", "cluster-two", url, "placement-pw")
	// First beside a public endpoint made by hand in regionTwo: refused, naming it, until it goes.
	byHand, err := endpoints.Create(ctx, kc, endpoints.CreateOpts{Availability: gophercloud.AvailabilityPublic,
		Region: "regionTwo", URL: "https://by-hand.example.com", ServiceID: service.ID}).Extract()
	g.Expect(err).NotTo(HaveOccurred())
	two.register(t)
	two.ready(t, svc())
	g.Expect(two.expect(t, ep(), keystonev1.KeystoneEndpointEndpointsReady, corev1.ConditionFalse, "NotAllowed")).To(ContainSubstring(
		"the service has a public endpoint in regionTwo already (" + byHand.ID + ", https://by-hand.example.com; no mark)"))
	g.Expect(read(t, kc).endpoints).To(Equal(map[string]map[string]string{"regionOne": one.urls(),
		"regionTwo": {"public": "https://by-hand.example.com"}}), "nothing of regionTwo's written")
	g.Expect(endpoints.Delete(ctx, kc, byHand.ID).ExtractErr()).To(Succeed())
	g.Eventually(func(gg Gomega) { // a touch has it looked at again at once
		current := &keystonev1.KeystoneEndpoint{}
		gg.Expect(two.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "placement"}, current)).To(Succeed())
		current.Annotations = map[string]string{"test.keystone.openstack.org/poke": "1"}
		gg.Expect(two.c.Update(ctx, current)).To(Succeed())
	}, wait, poll).Should(Succeed())
	two.ready(t, ep())
	g.Expect(two.expect(t, svc(), keystonev1.KeystoneServiceUserReady, corev1.ConditionTrue, "Ready")).To(ContainSubstring("adopted"))
	now := read(t, kc)
	g.Expect(now.services).To(Equal([]string{service.ID}))
	g.Expect(now.endpoints).To(Equal(map[string]map[string]string{"regionOne": one.urls(), "regionTwo": two.urls()}))
	g.Expect(now.users[0]).NotTo(HaveKey(identity.OwnerAttribute), "adopted: never marked")
	g.Expect(now.users[0][identity.OwnersAttribute]).To(HaveKey(HaveSuffix("@cluster-two")), "regionTwo recorded as using it")

	t.Log("regionOne switches to this suite: it claims what keystone-operator registered, on its proof")
	oneCluster := startRegion(t, "regionOne", "cluster-one", url, "placement-pw")
	one.c, one.cluster, one.stop = oneCluster.c, oneCluster.cluster, oneCluster.stop
	placement := &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "placement",
		Finalizers: []string{"openstack.org/keystoneservice"}},
		Spec: keystonev1.KeystoneServiceSpec{ServiceType: "placement", ServiceName: "placement", ServiceDescription: "Placement Service",
			Enabled: ptr.To(true), ServiceUser: "placement", Secret: "osp-secret", PasswordSelector: "PendingPassword"}}
	g.Expect(one.c.Create(ctx, placement)).To(Succeed())
	// keystone-operator's status (its KeystoneService controller's messages), written
	// until this operator carries it; the password it waits for comes after.
	g.Eventually(func(gg Gomega) {
		current := &keystonev1.KeystoneService{}
		gg.Expect(one.c.Get(ctx, client.ObjectKeyFromObject(placement), current)).To(Succeed())
		carried := current.Status.Conditions.Get("KeystoneServiceOSUserReady") != nil
		if carried && current.Status.Conditions.Get(keystonev1.KeystoneServiceServiceReady) != nil {
			return
		}
		if !carried {
			current.Status = upstream.ServiceStatus(current, service.ID)
			gg.Expect(one.c.Status().Update(ctx, current)).To(Succeed())
		}
		current.Annotations = map[string]string{"test.keystone.openstack.org/poke": current.ResourceVersion}
		gg.Expect(one.c.Update(ctx, current)).To(Succeed())
		gg.Expect(false).To(BeTrue(), "not carried yet")
	}, wait, poll).Should(Succeed())
	g.Eventually(func(gg Gomega) {
		s := &corev1.Secret{}
		gg.Expect(one.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "osp-secret"}, s)).To(Succeed())
		s.StringData = map[string]string{"PendingPassword": "placement-pw"}
		gg.Expect(one.c.Update(ctx, s)).To(Succeed())
	}, wait, poll).Should(Succeed())
	one.ready(t, svc())
	claimed := read(t, kc)
	g.Expect(claimed.users).To(HaveLen(1))
	g.Expect(claimed.users[0]["id"]).To(Equal(user.ID), "the same user")
	g.Expect(claimed.users[0][identity.OwnerAttribute]).To(HaveSuffix("@cluster-one"), "claimed by regionOne")
	g.Expect(claimed.users[0][identity.OwnersAttribute]).To(HaveKey(HaveSuffix("@cluster-two")),
		"regionTwo, recorded as using it since it adopted it, stays on the record: regionOne going would hand it over")

	t.Log("regionTwo sees at its next look that it joins what regionOne keeps")
	g.Eventually(func(gg Gomega) {
		conditions := two.conditions(gg, svc())
		gg.Expect(conditions.Get(keystonev1.KeystoneServiceServiceReady).Message).To(ContainSubstring("shared with the other regions"))
	}, wait, poll).Should(Succeed())

	t.Log("regionOne goes: regionTwo keeps it; regionTwo goes: everything goes")
	g.Expect(one.c.Delete(ctx, &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "placement"}})).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(one.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "placement"}, &keystonev1.KeystoneService{}))
	}, wait, poll).Should(BeTrue())
	left := read(t, kc)
	g.Expect(left.services).To(Equal([]string{service.ID}))
	g.Expect(left.endpoints).To(HaveKey("regionTwo"))
	g.Expect(left.users).To(HaveLen(1))
	g.Expect(left.users[0][identity.OwnerAttribute]).To(HaveSuffix("@cluster-two"), "handed to regionTwo")
	g.Expect(canLogin(url, "placement", "placement-pw")).To(BeTrue())
	two.lastGoes(t, kc)
}

// TestGoneRegionReleased: a region's cluster gone for good (its operator stopped, its
// objects never deleted) is released by an admin from the other region with the
// plugin's command (access.Admin, identity.ReleaseCluster): a dry run changes nothing;
// then its endpoints go, the service and user are handed to the region left, which
// keeps working and, as their only owner, deletes them when it goes.
func TestGoneRegionReleased(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	url, kc := sharedKeystone(t, "regionTwo")
	one := startRegion(t, "regionOne", "cluster-one", url, "placement-pw")
	two := startRegion(t, "regionTwo", "cluster-two", url, "placement-pw")
	one.register(t)
	one.ready(t, ep())
	two.register(t)
	two.ready(t, svc())
	two.ready(t, ep())
	shared := read(t, kc)
	g.Expect(shared.endpoints).To(HaveLen(2))

	t.Log("regionOne's cluster is gone for good: nothing of it is deleted")
	one.stop()
	release := func(apply bool) []identity.Release {
		admin, at, err := access.Admin(ctx, two.c, namespace, url, 30*time.Second)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(at).To(Equal(url))
		changes, err := admin.ReleaseCluster(ctx, "cluster-one", apply)
		g.Expect(err).NotTo(HaveOccurred())
		return changes
	}
	planned := release(false)
	g.Expect(planned).To(HaveLen(4), "two endpoints deleted, the service and the user handed over: %v", planned)
	g.Expect(read(t, kc)).To(Equal(shared), "a dry run changes nothing")

	t.Log("released: regionOne's endpoints go, the service and user are regionTwo's")
	g.Expect(release(true)).To(Equal(planned))
	left := read(t, kc)
	g.Expect(left.services).To(Equal(shared.services))
	g.Expect(left.endpoints).To(Equal(map[string]map[string]string{"regionTwo": two.urls()}))
	g.Expect(left.users).To(HaveLen(1))
	g.Expect(left.users[0][identity.OwnerAttribute]).To(HaveSuffix("@cluster-two"))
	g.Expect(left.users[0][identity.OwnersAttribute]).NotTo(HaveKey(HaveSuffix("@cluster-one")))
	g.Expect(canLogin(url, "placement", "placement-pw")).To(BeTrue())
	g.Expect(release(false)).To(BeEmpty(), "nothing of cluster-one is left")
	two.keepsAlone(t)
	two.ready(t, svc())
	two.ready(t, ep())

	t.Log("regionTwo, the only owner left, deletes everything when it goes")
	two.lastGoes(t, kc)
}
