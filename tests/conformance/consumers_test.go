package conformance

import (
	"context"
	"sort"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/endpoints"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/roles"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/services"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/users"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	keystonev1 "github.com/openstack-k8s-operators/keystone-operator/api/v1beta1"
	"github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	"github.com/openstack-k8s-operators/lib-common/modules/common/endpoint"
	"github.com/openstack-k8s-operators/lib-common/modules/common/helper"
	"github.com/openstack-k8s-operators/lib-common/modules/common/service"
	osclient "github.com/openstack-k8s-operators/lib-common/modules/openstack"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var ctx = context.Background()

// consumer is a service operator's custom resource (a ConfigMap stands in for it): the
// owner of its KeystoneService and KeystoneEndpoints, with the helper the operator
// builds for it (its finalizer is "openstack.org/configmap").
type consumer struct {
	owner *corev1.ConfigMap
	h     *helper.Helper
}

func newConsumer(ns, name string) consumer {
	GinkgoHelper()
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	Expect(k8sClient.Create(ctx, owner)).To(Succeed())
	owner.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	h, err := helper.NewHelper(owner, k8sClient, kclient, scheme, log)
	Expect(err).NotTo(HaveOccurred())
	return consumer{owner: owner, h: h}
}

// registerService does what a service operator's reconcile does until its
// KeystoneServiceReady mirrors True.
func (c consumer) registerService(spec keystonev1.KeystoneServiceSpec) *keystonev1.KeystoneServiceHelper {
	GinkgoHelper()
	ksSvc := keystonev1.NewKeystoneService(spec, c.owner.Namespace, map[string]string{"service": c.owner.Name}, 5*time.Second)
	Eventually(func(g Gomega) { c.reconcileService(g, ksSvc) }).Should(Succeed())
	return ksSvc
}

// reconcileService is one reconcile of a service operator for its KeystoneService: it
// creates or patches it, and succeeds when KeystoneServiceReady mirrors True with a
// service ID.
func (c consumer) reconcileService(g Gomega, ksSvc *keystonev1.KeystoneServiceHelper) {
	_, err := ksSvc.CreateOrPatch(ctx, c.h)
	g.Expect(err).NotTo(HaveOccurred())
	mirrored := ksSvc.GetConditions().Mirror(condition.KeystoneServiceReadyCondition)
	g.Expect(mirrored).NotTo(BeNil())
	g.Expect(mirrored.Status).To(Equal(corev1.ConditionTrue), "%s: %s", mirrored.Reason, mirrored.Message)
	g.Expect(ksSvc.GetServiceID()).NotTo(BeEmpty())
}

// registerEndpoint does what a service operator's reconcile does until its
// KeystoneEndpointReady mirrors True for the current generation.
func (c consumer) registerEndpoint(name, serviceName string, urls map[string]string) *keystonev1.KeystoneEndpointHelper {
	GinkgoHelper()
	ep := keystonev1.NewKeystoneEndpoint(name, c.owner.Namespace,
		keystonev1.KeystoneEndpointSpec{ServiceName: serviceName, Endpoints: urls}, map[string]string{"service": c.owner.Name}, 5*time.Second)
	Eventually(func(g Gomega) {
		_, err := ep.CreateOrPatch(ctx, c.h)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(ep.ValidateGeneration()).To(BeTrue())
		mirrored := ep.GetConditions().Mirror(condition.KeystoneEndpointReadyCondition)
		g.Expect(mirrored).NotTo(BeNil())
		g.Expect(mirrored.Status).To(Equal(corev1.ConditionTrue), "%s: %s", mirrored.Reason, mirrored.Message)
		g.Expect(ep.GetEndpointIDs()).To(HaveLen(len(urls)))
	}).Should(Succeed())
	return ep
}

// release does what a service operator does when its own resource is deleted: it
// deletes its KeystoneService and KeystoneEndpoints with the helpers, which also
// remove its finalizer from them.
func (c consumer) release(ksSvc *keystonev1.KeystoneServiceHelper, eps ...*keystonev1.KeystoneEndpointHelper) {
	GinkgoHelper()
	// The helpers remove the finalizer with an update of the object read before their
	// own delete, so a first call may conflict: the operator's next reconcile retries.
	for _, ep := range eps {
		Eventually(func() error { return ep.Delete(ctx, c.h) }).Should(Succeed())
	}
	if ksSvc != nil {
		Eventually(func() error { return ksSvc.Delete(ctx, c.h) }).Should(Succeed())
	}
}

// adminClient is an identity client of the real Keystone, independent of the operator's.
func adminClient() *gophercloud.ServiceClient {
	GinkgoHelper()
	provider, err := openstack.AuthenticatedClient(ctx, gophercloud.AuthOptions{
		IdentityEndpoint: keystone + "/v3/", Username: "admin", Password: adminPassword, DomainName: "Default",
		Scope: &gophercloud.AuthScope{ProjectName: "admin", DomainName: "Default"},
	})
	Expect(err).NotTo(HaveOccurred())
	return &gophercloud.ServiceClient{ProviderClient: provider, Endpoint: keystone + "/v3/", Type: "identity"}
}

// catalog is what Keystone holds for a service name, read by an independent client.
type catalog struct {
	Services  int
	Type      string
	Endpoints []string // "interface region url", sorted
}

func catalogOf(name string) catalog {
	GinkgoHelper()
	kc := adminClient()
	pages, err := services.List(kc, services.ListOpts{Name: name}).AllPages(ctx)
	Expect(err).NotTo(HaveOccurred())
	svcs, err := services.ExtractServices(pages)
	Expect(err).NotTo(HaveOccurred())
	out := catalog{Services: len(svcs), Endpoints: []string{}}
	for _, s := range svcs {
		out.Type = s.Type
		pages, err := endpoints.List(kc, endpoints.ListOpts{ServiceID: s.ID}).AllPages(ctx)
		Expect(err).NotTo(HaveOccurred())
		eps, err := endpoints.ExtractEndpoints(pages)
		Expect(err).NotTo(HaveOccurred())
		for _, e := range eps {
			out.Endpoints = append(out.Endpoints, string(e.Availability)+" "+e.Region+" "+e.URL)
		}
	}
	sort.Strings(out.Endpoints)
	return out
}

// userRoles returns the user's role names on the service project; nil when there is no such user.
func userRoles(name string) []string {
	GinkgoHelper()
	kc := adminClient()
	pages, err := users.List(kc, users.ListOpts{Name: name, DomainID: "default"}).AllPages(ctx)
	Expect(err).NotTo(HaveOccurred())
	us, err := users.ExtractUsers(pages)
	Expect(err).NotTo(HaveOccurred())
	if len(us) == 0 {
		return nil
	}
	Expect(us).To(HaveLen(1), "one user named %s", name)
	yes := true
	pages, err = roles.ListAssignments(kc, roles.ListAssignmentsOpts{UserID: us[0].ID, IncludeNames: &yes}).AllPages(ctx)
	Expect(err).NotTo(HaveOccurred())
	as, err := roles.ExtractRoleAssignments(pages)
	Expect(err).NotTo(HaveOccurred())
	names := []string{}
	for _, a := range as {
		names = append(names, a.Role.Name)
	}
	sort.Strings(names)
	return names
}

// canLogIn tells whether a service user gets a token scoped to the service project.
func canLogIn(user, password string) bool {
	_, err := openstack.AuthenticatedClient(ctx, gophercloud.AuthOptions{
		IdentityEndpoint: keystone + "/v3/", Username: user, Password: password, DomainName: "Default",
		Scope: &gophercloud.AuthScope{ProjectName: "service", DomainName: "Default"},
	})
	return err == nil
}

func gone(obj client.Object) func() bool {
	return func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), obj)) }
}

// externalKeystoneAPI creates what openstack-operator writes for a control plane whose
// Keystone runs elsewhere (the real Keystone here), with the services' passwords, and
// returns it once the upstream helpers read it Ready.
func externalKeystoneAPI(ns string) *keystonev1.KeystoneAPI {
	GinkgoHelper()
	Expect(k8sClient.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "osp-secret", Namespace: ns},
		StringData: map[string]string{"AdminPassword": adminPassword, "PlacementPassword": "placement-pw",
			"GlancePassword": "glance-pw", "NovaPassword": "nova-pw"}})).To(Succeed())
	api := &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Namespace: ns}}
	api.Spec.ContainerImage = "quay.io/podified-antelope-centos9/openstack-keystone:current-podified"
	api.Spec.DatabaseInstance, api.Spec.MemcachedInstance, api.Spec.Secret = "openstack", "memcached", "osp-secret"
	api.Spec.PasswordSelectors.Admin = "AdminPassword"
	api.Spec.Region, api.Spec.AdminUser, api.Spec.AdminProject = "regionOne", "admin", "admin"
	api.Spec.ExternalKeystoneAPI = true
	api.Spec.APITimeout = 60 // keystone-operator's webhook default, which openstack-operator applies
	api.Spec.Override.Service = map[service.Endpoint]service.RoutedOverrideSpec{
		service.EndpointPublic:   {EndpointURL: ptr.To(keystone)},
		service.EndpointInternal: {EndpointURL: ptr.To(keystone)},
	}
	Expect(k8sClient.Create(ctx, api)).To(Succeed())
	Eventually(func(g Gomega) {
		h, err := helper.NewHelper(api, k8sClient, kclient, scheme, log)
		g.Expect(err).NotTo(HaveOccurred())
		found, err := keystonev1.GetKeystoneAPI(ctx, h, ns, map[string]string{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(found.IsReady()).To(BeTrue())
		api = found
	}).Should(Succeed())
	return api
}

var _ = Describe("Dependent operators using keystone-operator's helpers", func() {
	var ns string
	var api *keystonev1.KeystoneAPI

	BeforeEach(func() {
		ns = newNamespace()
		api = externalKeystoneAPI(ns)
	})

	It("registers a service like placement does, and leaves nothing after the operator lets it go", func() {
		placement := newConsumer(ns, "placement")
		By("reading the KeystoneAPI as placement renders its configuration")
		found, err := keystonev1.GetKeystoneAPI(ctx, placement.h, ns, map[string]string{})
		Expect(err).NotTo(HaveOccurred())
		Expect(found.GetRegion()).To(Equal("regionOne"))
		internal, err := found.GetEndpoint(endpoint.EndpointInternal)
		Expect(err).NotTo(HaveOccurred())
		Expect(internal).To(Equal(keystone))
		public, err := found.GetEndpoint(endpoint.EndpointPublic)
		Expect(err).NotTo(HaveOccurred())
		Expect(public).To(Equal(keystone))

		ksSvc := placement.registerService(keystonev1.KeystoneServiceSpec{ServiceType: "placement", ServiceName: "placement",
			ServiceDescription: "Placement Service", Enabled: true, ServiceUser: "placement", Secret: "osp-secret",
			PasswordSelector: "PlacementPassword"})
		urls := map[string]string{"public": "http://placement-public." + ns + ".svc:8778",
			"internal": "http://placement-internal." + ns + ".svc:8778"}
		ep := placement.registerEndpoint("placement", "placement", urls)

		Expect(catalogOf("placement")).To(Equal(catalog{Services: 1, Type: "placement", Endpoints: []string{
			"internal regionOne " + urls["internal"], "public regionOne " + urls["public"]}}))
		Expect(userRoles("placement")).To(Equal([]string{"admin", "service"}), "keystone-operator's roles")
		Expect(canLogIn("placement", "placement-pw")).To(BeTrue())

		By("a second reconcile of the operator changes nothing")
		ids := ep.GetEndpointIDs()
		placement.registerEndpoint("placement", "placement", urls)
		Expect(ep.GetEndpointIDs()).To(Equal(ids))

		By("converged: a forced reconcile writes nothing, whatever the schema prunes (the KeystoneAPI's relatedObjects and registrations on keystone-operator's)")
		for _, obj := range []client.Object{&keystonev1.KeystoneService{}, &keystonev1.KeystoneEndpoint{}, &keystonev1.KeystoneAPI{}} {
			key := client.ObjectKey{Namespace: ns, Name: "placement"}
			if _, isAPI := obj.(*keystonev1.KeystoneAPI); isAPI {
				key.Name = api.Name
			}
			Expect(k8sClient.Get(ctx, key, obj)).To(Succeed())
			patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
			annotations := obj.GetAnnotations()
			if annotations == nil {
				annotations = map[string]string{}
			}
			annotations["conformance/touch"] = "1"
			obj.SetAnnotations(annotations)
			Expect(k8sClient.Patch(ctx, obj, patch)).To(Succeed())
			touched := obj.GetResourceVersion()
			Consistently(func() string {
				Expect(k8sClient.Get(ctx, key, obj)).To(Succeed())
				return obj.GetResourceVersion()
			}, 3*time.Second, 200*time.Millisecond).Should(Equal(touched), "%T written again after convergence", obj)
		}

		By("the operator's resource is deleted: it deletes what it created with the helpers")
		placement.release(ksSvc, ep)
		svcObj := &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Name: "placement", Namespace: ns}}
		epObj := &keystonev1.KeystoneEndpoint{ObjectMeta: metav1.ObjectMeta{Name: "placement", Namespace: ns}}
		Eventually(gone(epObj)).Should(BeTrue())
		Eventually(gone(svcObj)).Should(BeTrue())
		Expect(catalogOf("placement")).To(Equal(catalog{Endpoints: []string{}}))
		Expect(userRoles("placement")).To(BeNil())
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(api), api)).To(Succeed())
		Expect(api.Finalizers).To(ConsistOf("keystone.openstack.org/keystoneapi"), "every registration released the KeystoneAPI")
	})

	It("lets glance split its endpoints over two KeystoneEndpoints of one service, and nova read them all", func() {
		glance := newConsumer(ns, "glance")
		ksSvc := glance.registerService(keystonev1.KeystoneServiceSpec{ServiceType: "image", ServiceName: "glance",
			ServiceDescription: "Glance Image Service", Enabled: true, ServiceUser: "glance", Secret: "osp-secret",
			PasswordSelector: "GlancePassword"})
		internalURL := "http://glance-default-internal." + ns + ".svc:9292"
		publicURL := "http://glance-default-public." + ns + ".svc:9292"
		internal := glance.registerEndpoint("glance-default-internal", "glance", map[string]string{"internal": internalURL})
		external := glance.registerEndpoint("glance-default-external", "glance", map[string]string{"public": publicURL})
		Expect(catalogOf("glance").Endpoints).To(Equal([]string{"internal regionOne " + internalURL, "public regionOne " + publicURL}))

		By("nova reads every KeystoneEndpoint's URLs")
		nova := newConsumer(ns, "nova")
		novaSvc := nova.registerService(keystonev1.KeystoneServiceSpec{ServiceType: "compute", ServiceName: "nova",
			Enabled: true, ServiceUser: "nova", Secret: "osp-secret", PasswordSelector: "NovaPassword"})
		novaURL := "http://nova-internal." + ns + ".svc:8774/v2.1"
		novaEp := nova.registerEndpoint("nova", "nova", map[string]string{"internal": novaURL})
		all, err := keystonev1.GetKeystoneEndpointUrls(ctx, nova.h, ns, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(all).To(Equal([]string{internalURL, publicURL, novaURL}))
		visibility := "internal"
		internals, err := keystonev1.GetKeystoneEndpointUrls(ctx, nova.h, ns, &visibility)
		Expect(err).NotTo(HaveOccurred())
		Expect(internals).To(Equal([]string{internalURL, novaURL}))

		By("glance drops its external API: only that endpoint goes")
		glance.release(nil, external)
		Eventually(func() []string { return catalogOf("glance").Endpoints }).Should(Equal([]string{"internal regionOne " + internalURL}))
		Expect(catalogOf("nova").Endpoints).To(Equal([]string{"internal regionOne " + novaURL}))

		glance.release(ksSvc, internal)
		nova.release(novaSvc, novaEp)
		Eventually(func() catalog { return catalogOf("glance") }).Should(Equal(catalog{Endpoints: []string{}}))
		Eventually(func() catalog { return catalogOf("nova") }).Should(Equal(catalog{Endpoints: []string{}}))
	})

	It("gives heat and swift a system-scoped admin client that creates roles and users", func() {
		heat := newConsumer(ns, "heat")
		os, res, err := keystonev1.GetAdminServiceClient(ctx, heat.h, api)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.IsZero()).To(BeTrue())
		role := "heat_stack_user_" + ns
		roleID, err := os.CreateRole(ctx, log, role)
		Expect(err).NotTo(HaveOccurred())
		userID, err := os.CreateUser(ctx, log, osclient.User{Name: "heat_domain_admin_" + ns, Password: "heat-pw", DomainID: "default"})
		Expect(err).NotTo(HaveOccurred())
		kc := adminClient()
		r, err := roles.Get(ctx, kc, roleID).Extract()
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Name).To(Equal(role))
		u, err := users.Get(ctx, kc, userID).Extract()
		Expect(err).NotTo(HaveOccurred())
		Expect(u.Name).To(Equal("heat_domain_admin_" + ns))
		Expect(roles.Delete(ctx, kc, roleID).ExtractErr()).To(Succeed())
		Expect(users.Delete(ctx, kc, userID).ExtractErr()).To(Succeed())
	})

	It("lets the KeystoneAPI be deleted while services use it, removing their registration from the external Keystone", func() {
		placement := newConsumer(ns, "placement")
		ksSvc := placement.registerService(keystonev1.KeystoneServiceSpec{ServiceType: "placement", ServiceName: "placement",
			Enabled: true, ServiceUser: "placement", Secret: "osp-secret", PasswordSelector: "PlacementPassword"})
		ep := placement.registerEndpoint("placement", "placement", map[string]string{"internal": "http://placement:8778"})
		Expect(k8sClient.Delete(ctx, api)).To(Succeed())
		Eventually(gone(api)).Should(BeTrue())
		Eventually(func() catalog { return catalogOf("placement") }).Should(Equal(catalog{Endpoints: []string{}}))
		Expect(userRoles("placement")).To(BeNil())

		By("the service operator sees why, through its mirrored conditions")
		Eventually(func(g Gomega) {
			_, err := ksSvc.CreateOrPatch(ctx, placement.h)
			g.Expect(err).NotTo(HaveOccurred())
			mirrored := ksSvc.GetConditions().Mirror(condition.KeystoneServiceReadyCondition)
			g.Expect(mirrored.Status).To(Equal(corev1.ConditionFalse))
			g.Expect(mirrored.Message).To(ContainSubstring("KeystoneAPI"))
		}).Should(Succeed())
		placement.release(ksSvc, ep)
		Eventually(gone(&keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Name: "placement", Namespace: ns}})).Should(BeTrue())
	})

	It("lets a whole namespace go at once, leaving nothing in Keystone and no finalizer", func() {
		placement := newConsumer(ns, "placement")
		ksSvc := placement.registerService(keystonev1.KeystoneServiceSpec{ServiceType: "placement", ServiceName: "placement",
			Enabled: true, ServiceUser: "placement", Secret: "osp-secret", PasswordSelector: "PlacementPassword"})
		ep := placement.registerEndpoint("placement", "placement", map[string]string{"internal": "http://placement:8778"})
		// The namespace controller deletes everything at once; the service operator, its
		// own resource deleted too, lets go of what it created.
		for _, obj := range []client.Object{api,
			&keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Name: "placement", Namespace: ns}},
			&keystonev1.KeystoneEndpoint{ObjectMeta: metav1.ObjectMeta{Name: "placement", Namespace: ns}},
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "osp-secret", Namespace: ns}}} {
			Expect(k8sClient.Delete(ctx, obj)).To(Succeed())
		}
		placement.release(ksSvc, ep)
		for _, obj := range []client.Object{api,
			&keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Name: "placement", Namespace: ns}},
			&keystonev1.KeystoneEndpoint{ObjectMeta: metav1.ObjectMeta{Name: "placement", Namespace: ns}}} {
			Eventually(gone(obj)).Should(BeTrue(), "%T %s", obj, obj.GetName())
		}
		Expect(catalogOf("placement").Services).To(BeZero())
	})

	It("reports an endpoint no schema refuses as an Error, and registers nothing", func() {
		glance := newConsumer(ns, "glance")
		ksSvc := glance.registerService(keystonev1.KeystoneServiceSpec{ServiceType: "image", ServiceName: "glance",
			Enabled: true, ServiceUser: "glance", Secret: "osp-secret", PasswordSelector: "GlancePassword"})
		ep := keystonev1.NewKeystoneEndpoint("glance", ns, keystonev1.KeystoneEndpointSpec{ServiceName: "glance",
			Endpoints: map[string]string{"private": "http://glance:9292"}}, nil, 5*time.Second)
		Eventually(func(g Gomega) {
			_, err := ep.CreateOrPatch(ctx, glance.h)
			g.Expect(err).NotTo(HaveOccurred())
			mirrored := ep.GetConditions().Mirror(condition.KeystoneEndpointReadyCondition)
			g.Expect(mirrored).NotTo(BeNil())
			g.Expect(mirrored.Status).To(Equal(corev1.ConditionFalse))
			g.Expect(mirrored.Severity).To(Equal(condition.SeverityError))
			g.Expect(mirrored.Message).To(ContainSubstring(`endpoint interface "private" is not public, internal or admin`))
		}).Should(Succeed())
		Expect(catalogOf("glance").Endpoints).To(BeEmpty())
		glance.release(ksSvc, ep)
	})
})
