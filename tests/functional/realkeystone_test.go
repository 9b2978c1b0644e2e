package functional

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/endpoints"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/roles"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/services"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/users"
	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/endpointurl"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/tests/support/controlplane"
	"github.com/keystone-stepwise/keystone-operator/tests/support/localkeystone"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const realAdminPassword = "real-admin-secret"

var (
	realStack     *localkeystone.Stack
	realStackErr  error
	realStackOnce sync.Once
)

// realKeystone starts Debian's Keystone once for the test run (see localkeystone).
func realKeystone() *localkeystone.Stack {
	GinkgoHelper()
	// The real Keystone hashes passwords and answers from two uwsgi processes: on a busy
	// machine (make test runs the suites side by side) a step takes seconds, not
	// milliseconds. Its specs wait up to realTimeout; the fake's keep the short default.
	SetDefaultEventuallyTimeout(realTimeout)
	DeferCleanup(func() { SetDefaultEventuallyTimeout(timeout) })
	realStackOnce.Do(func() {
		api := keystoneAPI("stack")
		api.Spec.Region, api.Spec.AdminUser, api.Spec.AdminProject = "regionOne", "admin", "admin"
		api.Spec.FernetMaxActiveKeys = ptr.To[int32](5)
		// keystone-operator's default: everything below runs under the new policies and their scopes.
		api.Spec.EnableSecureRBAC = true
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		// Not GinkgoT().TempDir(): that goes with the first spec, the stack with the suite.
		dir, err := os.MkdirTemp("", "real-keystone-")
		if realStackErr = err; err != nil {
			return
		}
		realStack, realStackErr = localkeystone.StartStack(ctx, dir, api, realAdminPassword)
	})
	controlplane.Unavailable(GinkgoT(), realStackErr)
	Expect(realStackErr).NotTo(HaveOccurred())
	return realStack
}

// stopRealStack stops the real Keystone, if a spec started it.
func stopRealStack() {
	if realStack != nil {
		realStack.Stop()
		Expect(os.RemoveAll(realStack.Dir)).To(Succeed())
	}
}

// adminClient is an identity client of the real Keystone, independent of the operator's.
func adminClient(url string) *gophercloud.ServiceClient {
	GinkgoHelper()
	provider, err := openstack.AuthenticatedClient(context.Background(), gophercloud.AuthOptions{
		IdentityEndpoint: url + "/v3/", Username: "admin", Password: realAdminPassword, DomainName: "Default",
		Scope: &gophercloud.AuthScope{ProjectName: "admin", DomainName: "Default"},
	})
	Expect(err).NotTo(HaveOccurred())
	return &gophercloud.ServiceClient{ProviderClient: provider, Endpoint: url + "/v3/", Type: "identity"}
}

// userIDOf returns the ID of the real Keystone's user named name in the default domain.
func userIDOf(url, name string) string {
	GinkgoHelper()
	pages, err := users.List(adminClient(url), users.ListOpts{DomainID: "default", Name: name}).AllPages(context.Background())
	Expect(err).NotTo(HaveOccurred())
	found, err := users.ExtractUsers(pages)
	Expect(err).NotTo(HaveOccurred())
	Expect(found).To(HaveLen(1), "one user %s", name)
	return found[0].ID
}

// catalogOf describes what Keystone holds for a service type and user, as a test compares it.
type catalogOf struct {
	Services  []string          // IDs
	Endpoints map[string]string // interface -> "region url"
	Users     []string          // IDs
	Roles     []string          // role names the user has on the service project
}

func readCatalog(kc *gophercloud.ServiceClient, serviceType, user string) catalogOf {
	GinkgoHelper()
	ctx := context.Background()
	out := catalogOf{Endpoints: map[string]string{}}
	pages, err := services.List(kc, services.ListOpts{ServiceType: serviceType}).AllPages(ctx)
	Expect(err).NotTo(HaveOccurred())
	svcs, err := services.ExtractServices(pages)
	Expect(err).NotTo(HaveOccurred())
	for _, s := range svcs {
		out.Services = append(out.Services, s.ID)
		pages, err := endpoints.List(kc, endpoints.ListOpts{ServiceID: s.ID}).AllPages(ctx)
		Expect(err).NotTo(HaveOccurred())
		eps, err := endpoints.ExtractEndpoints(pages)
		Expect(err).NotTo(HaveOccurred())
		for _, e := range eps {
			Expect(out.Endpoints).NotTo(HaveKey(string(e.Availability)), "one endpoint per interface")
			out.Endpoints[string(e.Availability)] = e.Region + " " + e.URL
		}
	}
	pages, err = users.List(kc, users.ListOpts{Name: user, DomainID: "default"}).AllPages(ctx)
	Expect(err).NotTo(HaveOccurred())
	us, err := users.ExtractUsers(pages)
	Expect(err).NotTo(HaveOccurred())
	pages, err = projects.List(kc, projects.ListOpts{Name: "service", DomainID: "default"}).AllPages(ctx)
	Expect(err).NotTo(HaveOccurred())
	ps, err := projects.ExtractProjects(pages)
	Expect(err).NotTo(HaveOccurred())
	for _, u := range us {
		out.Users = append(out.Users, u.ID)
		if len(ps) == 0 {
			continue
		}
		yes := true
		pages, err := roles.ListAssignments(kc, roles.ListAssignmentsOpts{UserID: u.ID, ScopeProjectID: ps[0].ID, IncludeNames: &yes}).AllPages(ctx)
		Expect(err).NotTo(HaveOccurred())
		as, err := roles.ExtractRoleAssignments(pages)
		Expect(err).NotTo(HaveOccurred())
		for _, a := range as {
			out.Roles = append(out.Roles, a.Role.Name)
		}
	}
	return out
}

// userCanAuthenticate tells whether user gets a token scoped to the service project.
func userCanAuthenticate(url, user, password string) bool {
	_, err := openstack.AuthenticatedClient(context.Background(), gophercloud.AuthOptions{
		IdentityEndpoint: url + "/v3/", Username: user, Password: password, DomainName: "Default",
		Scope: &gophercloud.AuthScope{ProjectName: "service", DomainName: "Default"},
	})
	return err == nil
}

var _ = Describe("KeystoneService against the real Keystone", Label("real-keystone"), func() {
	var (
		ns    string
		stack *localkeystone.Stack
		kc    *gophercloud.ServiceClient
	)
	AfterEach(func() {
		if CurrentSpecReport().Failed() && stack != nil {
			GinkgoWriter.Println(stack.Logs())
		}
	})
	BeforeEach(func() {
		stack = realKeystone()
		kc = adminClient(stack.Keystone.URL())
		ns = newNamespace()
		api := externalKeystoneAPI(ns)
		api.Spec.Override.Service.Internal.EndpointURL = ptr.To(stack.Keystone.URL())
		Expect(k8sClient.Create(ctx, api)).To(Succeed())
		createSecret(ns, "osp-secret", map[string]string{"AdminPassword": realAdminPassword, "ServicePassword": "service-pw-1"})
		expectConditions(client.ObjectKeyFromObject(api), condition{"Ready", "True", "Ready", ""})
	})
	// service returns a KeystoneService whose catalog names are unique to this spec's namespace.
	service := func(name string) *keystonev1.KeystoneService {
		svc := keystoneService(ns)
		svc.Name = name
		svc.Spec.ServiceType = ns + "-" + name
		svc.Spec.ServiceName = name
		svc.Spec.ServiceUser = ns + "-" + name
		svc.Spec.PasswordSelector = "ServicePassword"
		return svc
	}
	// endpoint returns the KeystoneEndpoint of service(name).
	endpoint := func(name string) *keystonev1.KeystoneEndpoint {
		ep := keystoneEndpoint(ns)
		ep.Name, ep.Spec.ServiceName = name, name
		ep.Spec.Endpoints = map[string]string{
			"public":   "https://" + name + ".example.com",
			"internal": "http://" + name + "-internal." + ns + ".svc:9292",
		}
		return ep
	}

	It("registers exactly the spec, follows a password rotation, and leaves nothing after deletion", func() {
		svc, ep := service("glance"), endpoint("glance")
		Expect(k8sClient.Create(ctx, svc)).To(Succeed())
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		key := client.ObjectKeyFromObject(svc)
		expectServiceConditions(key, condition{"Ready", "True", "Ready", ""})
		expectEndpointConditions(client.ObjectKeyFromObject(ep), condition{"Ready", "True", "Ready", ""})
		url := stack.Keystone.URL()

		got := readCatalog(kc, svc.Spec.ServiceType, svc.Spec.ServiceUser)
		Expect(got.Services).To(Equal([]string{getService(key)(Default).Status.ServiceID}))
		Expect(got.Endpoints).To(Equal(map[string]string{
			"public":   "regionOne " + ep.Spec.Endpoints["public"],
			"internal": "regionOne " + ep.Spec.Endpoints["internal"],
		}))
		Expect(got.Users).To(HaveLen(1))
		Expect(got.Roles).To(ConsistOf("admin", "service"))
		Expect(userCanAuthenticate(url, svc.Spec.ServiceUser, "service-pw-1")).To(BeTrue())

		By("Keystone keeps the owner mark the endpoints were created with")
		pages, err := endpoints.List(kc, endpoints.ListOpts{ServiceID: getService(key)(Default).Status.ServiceID}).AllPages(context.Background())
		Expect(err).NotTo(HaveOccurred())
		var marked []identity.Endpoint
		Expect(pages.(endpoints.EndpointPage).ExtractIntoSlicePtr(&marked, "endpoints")).To(Succeed())
		Expect(marked).To(HaveLen(2))
		for _, e := range marked {
			Expect(e.Owner).To(Equal("KeystoneEndpoint/" + ns + "/glance/" + string(getEndpoint(client.ObjectKeyFromObject(ep))(Default).UID) + "@" + clusterID()))
		}

		By("rotating the password in the Secret")
		setSecretKey(ns, "osp-secret", "ServicePassword", "service-pw-2")
		Eventually(func() bool { return userCanAuthenticate(url, svc.Spec.ServiceUser, "service-pw-2") }).Should(BeTrue())
		Expect(userCanAuthenticate(url, svc.Spec.ServiceUser, "service-pw-1")).To(BeFalse(), "the old password no longer works")
		expectServiceConditions(key, condition{"Ready", "True", "Ready", ""})

		By("deleting the KeystoneService and its KeystoneEndpoint")
		Expect(k8sClient.Delete(ctx, svc)).To(Succeed())
		Expect(k8sClient.Delete(ctx, ep)).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, key, &keystonev1.KeystoneService{})) }).Should(BeTrue())
		got = readCatalog(kc, svc.Spec.ServiceType, svc.Spec.ServiceUser)
		Expect(got.Services).To(BeEmpty())
		Expect(got.Endpoints).To(BeEmpty())
		Expect(got.Users).To(BeEmpty())
	})

	It("removes what it registered before a change, revokes removed roles, and never deletes what it adopted", func() {
		ctx := context.Background()
		svc, ep := service("nova"), endpoint("nova")
		By("an existing user of that name with another password: its password is not set")
		adopted, err := users.Create(ctx, kc, users.CreateOpts{Name: svc.Spec.ServiceUser, DomainID: "default", Password: "x"}).Extract()
		Expect(err).NotTo(HaveOccurred())
		Expect(k8sClient.Create(ctx, svc)).To(Succeed())
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		key := client.ObjectKeyFromObject(svc)
		expectServiceConditions(key, condition{"ServiceUserReady", "False", "PasswordConflict", "Warning"})
		Expect(canAuthenticate(stack.Keystone.URL(), svc.Spec.ServiceUser, "x")).To(BeTrue(), "its password untouched")

		By("the user's password set to the Secret's by its owner: adopted, and kept after deletion")
		Expect(users.Update(ctx, kc, adopted.ID, users.UpdateOpts{Password: "service-pw-1"}).Err).To(Succeed())
		touchService(key)
		expectServiceConditions(key, condition{"Ready", "True", "Ready", ""})
		expectEndpointConditions(client.ObjectKeyFromObject(ep), condition{"Ready", "True", "Ready", ""})
		Expect(getService(key)(Default).Status.Conditions.Get("ServiceUserReady").Message).To(ContainSubstring("adopted"))
		oldType, oldService := svc.Spec.ServiceType, getService(key)(Default).Status.ServiceID

		By("a new type, name and user: the old service (with its endpoints) goes; the adopted user stays")
		updateService(key, func(s *keystonev1.KeystoneService) {
			s.Spec.ServiceType, s.Spec.ServiceName, s.Spec.ServiceUser = ns+"-compute2", "nova2", ns+"-nova2"
			s.Spec.Roles = []string{"service"}
		})
		Eventually(func() []string { return readCatalog(kc, oldType, "").Services }).Should(BeEmpty())
		expectServiceConditions(key, condition{"Ready", "True", "Ready", ""})
		now := readCatalog(kc, ns+"-compute2", ns+"-nova2")
		Expect(now.Services).To(HaveLen(1))
		Expect(now.Services[0]).NotTo(Equal(oldService))
		Expect(now.Roles).To(ConsistOf("service"))
		Eventually(func() map[string]string { return readCatalog(kc, ns+"-compute2", "").Endpoints }).Should(HaveLen(2))
		_, err = users.Get(ctx, kc, adopted.ID).Extract()
		Expect(err).NotTo(HaveOccurred(), "the adopted user is not this KeystoneService's to delete")

		By("a role removed from the spec is revoked; one added is assigned")
		updateService(key, func(s *keystonev1.KeystoneService) { s.Spec.Roles = []string{"admin"} })
		Eventually(func() []string { return readCatalog(kc, ns+"-compute2", ns+"-nova2").Roles }).Should(ConsistOf("admin"))

		By("deleting it removes what it created")
		Expect(k8sClient.Delete(ctx, ep)).To(Succeed())
		Expect(k8sClient.Delete(ctx, getService(key)(Default))).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, key, &keystonev1.KeystoneService{})) }).Should(BeTrue())
		gone := readCatalog(kc, ns+"-compute2", ns+"-nova2")
		Expect(gone.Services).To(BeEmpty())
		Expect(gone.Users).To(BeEmpty())
		Expect(readCatalog(kc, oldType, svc.Spec.ServiceUser).Users).To(Equal([]string{adopted.ID}))
		Expect(users.Delete(ctx, kc, adopted.ID).ExtractErr()).To(Succeed())
	})

	It("agrees with Keystone on every endpoint URL of internal/endpointurl/testdata/urls.txt, and registers heat's templates", func() {
		ctx := context.Background()
		svc, err := services.Create(ctx, kc, services.CreateOpts{Type: ns + "-urls", Extra: map[string]any{"name": "urls"}}).Extract()
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(services.Delete(ctx, kc, svc.ID).ExtractErr()).To(Succeed()) })
		data, err := os.ReadFile(filepath.Join("..", "..", "internal", "endpointurl", "testdata", "urls.txt"))
		Expect(err).NotTo(HaveOccurred())
		checked := 0
		for _, line := range strings.Split(string(data), "\n") {
			verdict, url, ok := strings.Cut(line, "\t")
			if !ok || strings.HasPrefix(line, "#") {
				continue
			}
			v := endpointurl.Check(url)
			refused := v.Refused != ""
			Expect(refused).To(Equal(verdict == "refused"), "%s: the table and Check disagree", url)
			e, err := endpoints.Create(ctx, kc, endpoints.CreateOpts{ServiceID: svc.ID, Availability: gophercloud.AvailabilityPublic,
				Region: "regionOne", URL: url}).Extract()
			if verdict == "refused" {
				Expect(identity.StatusCode(err)).To(Equal(http.StatusBadRequest), "%s: Keystone takes what Check refuses (%s)", url, v.Refused)
				checked++
				continue
			}
			Expect(err).NotTo(HaveOccurred(), "%s: Keystone refuses what Check takes", url)
			Expect(e.URL).To(Equal(url), "stored as sent")
			Expect(endpoints.Delete(ctx, kc, e.ID).ExtractErr()).To(Succeed())
			checked++
		}
		Expect(checked).To(BeNumerically(">", 40))

		By("a KeystoneEndpoint with heat's URLs: registered as written, and shown so")
		heat, ep := service("heat"), endpoint("heat")
		ep.Spec.Endpoints = map[string]string{
			"public":   "http://heat-api-public." + ns + ".svc:8004/v1/%(tenant_id)s",
			"internal": "http://heat-api-internal." + ns + ".svc:8004/v1/%(tenant_id)s",
		}
		Expect(k8sClient.Create(ctx, heat)).To(Succeed())
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		expectEndpointConditions(client.ObjectKeyFromObject(ep), condition{"Ready", "True", "Ready", ""})
		Expect(readCatalog(kc, heat.Spec.ServiceType, "").Endpoints).To(Equal(map[string]string{
			"public":   "regionOne " + ep.Spec.Endpoints["public"],
			"internal": "regionOne " + ep.Spec.Endpoints["internal"],
		}))
		registered := getEndpoint(client.ObjectKeyFromObject(ep))(Default)
		Expect(registered.Status.Endpoints).To(ContainElement(HaveField("URL", ep.Spec.Endpoints["internal"])))
		Expect(registered.Status.Conditions.Get("KeystoneServiceOSEndpointsReady").Message).To(ContainSubstring("/v1/%(tenant_id)s"))
	})

	It("registers ten KeystoneServices created at once, with no duplicate", func() {
		const n = 10
		for i := 0; i < n; i++ {
			Expect(k8sClient.Create(ctx, service(fmt.Sprintf("svc%d", i)))).To(Succeed())
			Expect(k8sClient.Create(ctx, endpoint(fmt.Sprintf("svc%d", i)))).To(Succeed())
		}
		for i := 0; i < n; i++ {
			Eventually(func(g Gomega) {
				key := types.NamespacedName{Namespace: ns, Name: fmt.Sprintf("svc%d", i)}
				g.Expect(getService(key)(g).Status.Conditions.IsTrue("Ready")).To(BeTrue())
				g.Expect(getEndpoint(key)(g).Status.Conditions.IsTrue("Ready")).To(BeTrue())
			}, 60*time.Second).Should(Succeed())
		}
		for i := 0; i < n; i++ {
			svc := service(fmt.Sprintf("svc%d", i))
			got := readCatalog(kc, svc.Spec.ServiceType, svc.Spec.ServiceUser)
			Expect(got.Services).To(HaveLen(1), svc.Name)
			Expect(got.Endpoints).To(HaveLen(2), svc.Name)
			Expect(got.Users).To(HaveLen(1), svc.Name)
			Expect(got.Roles).To(ConsistOf("admin", "service"), svc.Name)
		}
		pages, err := projects.List(kc, projects.ListOpts{Name: "service", DomainID: "default"}).AllPages(context.Background())
		Expect(err).NotTo(HaveOccurred())
		ps, err := projects.ExtractProjects(pages)
		Expect(err).NotTo(HaveOccurred())
		Expect(ps).To(HaveLen(1), "one service project")
	})
})

var _ = Describe("A namespace torn down", Label("real-keystone"), func() {
	It("leaves nothing of its 50 KeystoneServices in an external Keystone, and no finalizer, within 60 s", func() {
		stack := realKeystone()
		kc := adminClient(stack.Keystone.URL())
		ns := newNamespace()
		api := externalKeystoneAPI(ns)
		api.Spec.Override.Service.Internal.EndpointURL = ptr.To(stack.Keystone.URL())
		Expect(k8sClient.Create(ctx, api)).To(Succeed())
		createSecret(ns, "osp-secret", map[string]string{"AdminPassword": realAdminPassword, "ServicePassword": "teardown-pw"})
		const n = 50
		for i := range n {
			name := fmt.Sprintf("td%02d", i)
			svc := keystoneService(ns)
			svc.Name, svc.Spec.ServiceName, svc.Spec.ServiceType, svc.Spec.ServiceUser = name, name, ns+"-"+name, ns+"-"+name
			svc.Spec.PasswordSelector = "ServicePassword"
			Expect(k8sClient.Create(ctx, svc)).To(Succeed())
			ep := keystoneEndpoint(ns)
			ep.Name, ep.Spec.ServiceName = name, name
			Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		}
		Eventually(func(g Gomega) {
			list := &keystonev1.KeystoneEndpointList{}
			g.Expect(k8sClient.List(ctx, list, client.InNamespace(ns))).To(Succeed())
			g.Expect(list.Items).To(HaveLen(n))
			for _, ep := range list.Items {
				g.Expect(ep.Status.Conditions.IsTrue("Ready")).To(BeTrue(), ep.Name)
			}
			// Setting up, not the measure: make test runs other suites beside this one.
		}, 5*time.Minute, 200*time.Millisecond).Should(Succeed())
		Expect(registeredIn(kc, ns)).To(HaveLen(2*n), "a service and a user each")

		By("deleting everything at once, as the namespace controller does (envtest runs none): every kind's collection")
		start := time.Now()
		for _, obj := range []client.Object{&keystonev1.KeystoneEndpoint{}, &keystonev1.KeystoneService{}, &keystonev1.KeystoneAPI{},
			&corev1.Secret{}, &corev1.ConfigMap{}} {
			Expect(k8sClient.DeleteAllOf(ctx, obj, client.InNamespace(ns))).To(Succeed())
		}
		Eventually(func(g Gomega) {
			for _, list := range []client.ObjectList{&keystonev1.KeystoneEndpointList{}, &keystonev1.KeystoneServiceList{},
				&keystonev1.KeystoneAPIList{}, &corev1.SecretList{}} {
				g.Expect(k8sClient.List(ctx, list, client.InNamespace(ns))).To(Succeed())
				g.Expect(apimeta.LenList(list)).To(BeZero(), "%T left", list)
			}
		}, 60*time.Second, 200*time.Millisecond).Should(Succeed())
		GinkgoWriter.Printf("namespace of %d registrations torn down in %s\n", n, time.Since(start).Round(100*time.Millisecond))
		Expect(registeredIn(kc, ns)).To(BeEmpty(), "nothing of the namespace is left in Keystone")
	})
})

// registeredIn lists the services and users of the real Keystone whose type or name
// starts with the namespace's name, as the teardown spec names them.
func registeredIn(kc *gophercloud.ServiceClient, ns string) []string {
	GinkgoHelper()
	ctx := context.Background()
	var out []string
	pages, err := services.List(kc, nil).AllPages(ctx)
	Expect(err).NotTo(HaveOccurred())
	svcs, err := services.ExtractServices(pages)
	Expect(err).NotTo(HaveOccurred())
	for _, s := range svcs {
		if strings.HasPrefix(s.Type, ns+"-") {
			out = append(out, "service "+s.Type)
		}
	}
	pages, err = users.List(kc, nil).AllPages(ctx)
	Expect(err).NotTo(HaveOccurred())
	us, err := users.ExtractUsers(pages)
	Expect(err).NotTo(HaveOccurred())
	for _, u := range us {
		if strings.HasPrefix(u.Name, ns+"-") {
			out = append(out, "user "+u.Name)
		}
	}
	return out
}

// realCredentialUser deploys, in a new namespace ns, an external KeystoneAPI on the real
// Keystone at url and a KeystoneService whose user (password ac-user-pw, key
// ServicePassword of osp-secret) application credentials are made for; it returns the
// KeystoneService once Ready.
func realCredentialUser(ns, url string) *keystonev1.KeystoneService {
	GinkgoHelper()
	api := externalKeystoneAPI(ns)
	api.Spec.Override.Service.Internal.EndpointURL = ptr.To(url)
	Expect(k8sClient.Create(ctx, api)).To(Succeed())
	createSecret(ns, "osp-secret", map[string]string{"AdminPassword": realAdminPassword, "ServicePassword": "ac-user-pw"})
	svc := keystoneService(ns)
	svc.Spec.ServiceType, svc.Spec.ServiceUser, svc.Spec.PasswordSelector = ns+"-ac", ns+"-ac", "ServicePassword"
	Expect(k8sClient.Create(ctx, svc)).To(Succeed())
	expectServiceConditions(client.ObjectKeyFromObject(svc), condition{"Ready", "True", "Ready", ""})
	return svc
}

var _ = Describe("KeystoneApplicationCredential against the real Keystone", Label("real-keystone"), func() {
	var (
		ns    string
		stack *localkeystone.Stack
	)
	AfterEach(func() {
		if CurrentSpecReport().Failed() && stack != nil {
			GinkgoWriter.Println(stack.Logs())
		}
	})

	It("makes a credential that authenticates, rotates it, and revokes what it made", func() {
		stack = realKeystone()
		url := stack.Keystone.URL()
		ns = newNamespace()
		svc := realCredentialUser(ns, url)

		ac := applicationCredential(ns)
		ac.Spec.UserName, ac.Spec.PasswordSelector = svc.Spec.ServiceUser, "ServicePassword"
		ac.Spec.AccessRules = []keystonev1.ACRule{{Service: "identity", Path: "/v3/auth/tokens", Method: "GET"}}
		Expect(k8sClient.Create(ctx, ac)).To(Succeed())
		key := client.ObjectKeyFromObject(ac)
		expectAppCredConditions(key, condition{"Ready", "True", "Ready", ""})
		first := getAppCred(key)(Default).Status
		firstSecret := acSecret(ns, first.SecretName)
		Expect(canUseAppCred(url, string(firstSecret.Data["AC_ID"]), string(firstSecret.Data["AC_SECRET"]))).To(BeTrue())

		By("a roles change replaces it; with no consumer, the first is revoked in Keystone")
		update(key, &keystonev1.KeystoneApplicationCredential{}, func(ac *keystonev1.KeystoneApplicationCredential) {
			ac.Spec.Roles = []string{"service", "admin"}
		})
		Eventually(func(g Gomega) { g.Expect(getAppCred(key)(g).Status.ACID).NotTo(Equal(first.ACID)) }).Should(Succeed())
		expectAppCredConditions(key, condition{"Ready", "True", "Ready", ""})
		second := acSecret(ns, getAppCred(key)(Default).Status.SecretName)
		Expect(canUseAppCred(url, string(second.Data["AC_ID"]), string(second.Data["AC_SECRET"]))).To(BeTrue())
		Eventually(func() bool {
			return canUseAppCred(url, string(firstSecret.Data["AC_ID"]), string(firstSecret.Data["AC_SECRET"]))
		}, 20*time.Second).Should(BeFalse(), "revoked")

		By("deletion revokes it with the admin's credentials alone, the user's password already gone")
		setSecretKey(ns, "osp-secret", "ServicePassword", "")
		Expect(k8sClient.Delete(ctx, getAppCred(key)(Default))).To(Succeed())
		Eventually(gone(key, &keystonev1.KeystoneApplicationCredential{})).Should(BeTrue())
		Expect(canUseAppCred(url, string(second.Data["AC_ID"]), string(second.Data["AC_SECRET"]))).To(BeFalse())
	})
})
