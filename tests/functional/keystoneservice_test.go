package functional

import (
	"context"
	"net/http"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/fakekeystone"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// expectServiceConditions waits until the KeystoneService's conditions include want.
func expectServiceConditions(key types.NamespacedName, want ...condition) {
	GinkgoHelper()
	expectObservedConditions(key, &keystonev1.KeystoneService{}, func(s *keystonev1.KeystoneService) (lc.Conditions, int64) {
		return s.Status.Conditions, s.Status.ObservedGeneration
	}, want...)
}

func updateService(key types.NamespacedName, mutate func(*keystonev1.KeystoneService)) {
	GinkgoHelper()
	update(key, &keystonev1.KeystoneService{}, mutate)
}

func touchService(key types.NamespacedName) {
	GinkgoHelper()
	update(key, &keystonev1.KeystoneService{}, touchAnnotation)
}

// eventReasons lists the reasons of the events of an object.
func eventReasons(ns, name string) []string {
	events := &corev1.EventList{}
	Expect(k8sClient.List(ctx, events, client.InNamespace(ns))).To(Succeed())
	var reasons []string
	for _, e := range events.Items {
		if e.InvolvedObject.Name == name {
			reasons = append(reasons, e.Reason)
		}
	}
	return reasons
}

// canAuthenticate tells whether user can get a token from ks with password.
func canAuthenticate(url, user, password string) bool {
	_, err := openstack.AuthenticatedClient(context.Background(), gophercloud.AuthOptions{
		IdentityEndpoint: url + "/v3/", Username: user, Password: password, DomainName: "Default",
	})
	return err == nil
}

var _ = Describe("KeystoneService", func() {
	var (
		ns  string
		ks  *fakekeystone.Server
		key types.NamespacedName
	)
	// keystone makes the namespace's KeystoneAPI an external one at the fake Keystone.
	keystone := func() {
		api := externalKeystoneAPI(ns)
		api.Spec.Override.Service.Internal.EndpointURL = ptr.To(ks.URL)
		Expect(k8sClient.Create(ctx, api)).To(Succeed())
		createSecret(ns, "osp-secret", map[string]string{"AdminPassword": "secret-admin", "GlancePassword": "glance-1"})
		expectConditions(client.ObjectKeyFromObject(api), condition{"Ready", "True", "Ready", ""})
	}
	register := func() {
		Expect(k8sClient.Create(ctx, keystoneService(ns))).To(Succeed())
		expectServiceConditions(key, condition{"Ready", "True", "Ready", ""})
	}
	BeforeEach(func() {
		ns = newNamespace()
		ks = fakekeystone.New("admin", "secret-admin")
		DeferCleanup(ks.Close)
		key = types.NamespacedName{Namespace: ns, Name: "glance"}
	})

	It("walks every step forward and registers exactly what the spec says", func() {
		Expect(k8sClient.Create(ctx, keystoneService(ns))).To(Succeed())
		By("no KeystoneAPI yet")
		expectServiceConditions(key,
			condition{"Ready", "False", "DependencyNotFound", "Warning"},
			condition{"KeystoneAPIReady", "False", "DependencyNotFound", "Warning"})

		By("a KeystoneAPI that is not ready yet: waiting, not failing")
		api := externalKeystoneAPI(ns)
		api.Spec.Override.Service.Internal.EndpointURL = ptr.To(ks.URL)
		Expect(k8sClient.Create(ctx, api)).To(Succeed())
		Eventually(func(g Gomega) {
			c := getService(key)(g).Status.Conditions.Get("KeystoneAPIReady")
			g.Expect(c.Reason).To(BeEquivalentTo("DependencyNotFound"))
			g.Expect(c.Message).To(HavePrefix("KeystoneAPI keystone: InputReady"), "mirrors the KeystoneAPI's blocking step")
		}).Should(Succeed())

		By("the KeystoneAPI turns Ready: that wakes the service, whose password is missing")
		createSecret(ns, "osp-secret", map[string]string{"AdminPassword": "secret-admin"})
		expectServiceConditions(key,
			condition{"KeystoneAPIReady", "True", "Ready", ""},
			condition{"InputReady", "False", "DependencyNotFound", "Warning"})

		By("the password arrives: registered")
		setSecretKey(ns, "osp-secret", "GlancePassword", "glance-1")
		expectServiceConditions(key,
			condition{"Ready", "True", "Ready", ""},
			condition{"KeystoneServiceReady", "True", "Ready", ""},
			condition{"ServiceUserReady", "True", "Ready", ""},
			condition{"RolesReady", "True", "Ready", ""},
			condition{"RoleAssignmentReady", "True", "Ready", ""})
		Eventually(func() []string { return eventReasons(ns, "glance") }).Should(ContainElements(
			"ServiceCreated", "UserCreated", "RoleCreated", "AssignUserRoleCreated"),
			"each step reported its creation before it was confirmed")

		svc := getService(key)(Default)
		services := ks.List(fakekeystone.Services, map[string]any{"type": "image"})
		Expect(services).To(HaveLen(1))
		Expect(services[0]).To(HaveKeyWithValue("name", "glance"))
		Expect(services[0]["id"]).To(Equal(svc.Status.ServiceID))
		Expect(ks.List(fakekeystone.Endpoints, nil)).To(BeEmpty(), "endpoints are KeystoneEndpoints' business")
		Expect(canAuthenticate(ks.URL, "glance", "glance-1")).To(BeTrue())
		project := ks.List(fakekeystone.Projects, map[string]any{"name": "service"})
		Expect(project).To(HaveLen(1))
		user := ks.List(fakekeystone.Users, map[string]any{"name": "glance"})
		Expect(user).To(HaveLen(1))
		for _, role := range []string{"admin", "service"} {
			r := ks.List(fakekeystone.Roles, map[string]any{"name": role})
			Expect(r).To(HaveLen(1))
			Expect(ks.Assigned(project[0]["id"].(string), user[0]["id"].(string), r[0]["id"].(string))).To(BeTrue(), role)
		}
	})

	It("warns while Keystone is down and recovers without duplicates", func() {
		keystone()
		register()
		ks.Fail(http.StatusServiceUnavailable)
		touchService(key)
		expectServiceConditions(key,
			condition{"Ready", "False", "ServiceUnavailable", "Warning"},
			condition{"KeystoneServiceReady", "False", "ServiceUnavailable", "Warning"})
		ks.Heal()
		expectServiceConditions(key, condition{"Ready", "True", "Ready", ""})
		Expect(ks.List(fakekeystone.Services, nil)).To(HaveLen(1))
		Expect(ks.List(fakekeystone.Users, map[string]any{"name": "glance"})).To(HaveLen(1))
	})

	It("stalls on a request Keystone refuses, and retries on a spec change", func() {
		keystone()
		ks.FailNext(http.MethodPost, "/v3/services", http.StatusForbidden)
		Expect(k8sClient.Create(ctx, keystoneService(ns))).To(Succeed())
		expectServiceConditions(key,
			condition{"Ready", "False", "ServiceFailed", "Error"},
			condition{"KeystoneServiceReady", "False", "ServiceFailed", "Error"},
			condition{"Stalled", "True", "ServiceFailed", ""})
		Expect(getService(key)(Default).Status.Conditions.Get("KeystoneServiceReady").Message).To(ContainSubstring("Forbidden"))
		updateService(key, func(s *keystonev1.KeystoneService) { s.Spec.ServiceDescription = "Glance Image Service" })
		expectServiceConditions(key, condition{"Ready", "True", "Ready", ""})
		Expect(ks.List(fakekeystone.Services, nil)[0]).To(HaveKeyWithValue("description", "Glance Image Service"))
	})

	DescribeTable("looks up again when a create answers 409 because another client won the race",
		func(kind string) {
			keystone()
			ks.RaceNext(kind)
			register()
			Expect(ks.List(fakekeystone.Projects, map[string]any{"name": "service"})).To(HaveLen(1))
			Expect(ks.List(fakekeystone.Users, map[string]any{"name": "glance"})).To(HaveLen(1))
			Expect(ks.List(fakekeystone.Roles, map[string]any{"name": "service"})).To(HaveLen(1))
		},
		Entry("the service project", fakekeystone.Projects),
		Entry("the user", fakekeystone.Users),
		Entry("a role", fakekeystone.Roles),
	)

	It("sets the new password in Keystone when the Secret changes", func() {
		keystone()
		register()
		setSecretKey(ns, "osp-secret", "GlancePassword", "glance-2")
		Eventually(func() bool { return canAuthenticate(ks.URL, "glance", "glance-2") }).Should(BeTrue())
		Expect(canAuthenticate(ks.URL, "glance", "glance-1")).To(BeFalse())
		expectServiceConditions(key, condition{"Ready", "True", "Ready", ""})
	})

	It("adopts a service that already exists", func() {
		keystone()
		id := ks.Create(fakekeystone.Services, map[string]any{"type": "image", "name": "glance", "enabled": true})
		register()
		Expect(getService(key)(Default).Status.ServiceID).To(Equal(id))
		Expect(ks.List(fakekeystone.Services, nil)).To(HaveLen(1))
	})

	It("authenticates once and reuses its token over many reconciles, and again after the token expires", func() {
		keystone()
		register()
		before := ks.Authentications.Load()
		for i := 0; i < 50; i++ {
			touchService(key)
		}
		expectServiceConditions(key, condition{"Ready", "True", "Ready", ""})
		Consistently(func() int64 { return ks.Authentications.Load() }, time.Second).Should(Equal(before))

		ks.ExpireTokens()
		touchService(key)
		Eventually(func() int64 { return ks.Authentications.Load() }).Should(BeNumerically(">", before))
		expectServiceConditions(key, condition{"Ready", "True", "Ready", ""})
	})

	It("authenticates again when Keystone answers 404 to a request that cannot get one", func() {
		keystone()
		register()
		before := ks.Authentications.Load()
		ks.FailNext(http.MethodGet, "/v3/role_assignments", http.StatusNotFound)
		touchService(key)
		Eventually(func() int64 { return ks.Authentications.Load() }).Should(Equal(before + 1))
		expectServiceConditions(key, condition{"Ready", "True", "Ready", ""})
	})

	It("performs no Kubernetes write when converged", func() {
		keystone()
		register()
		before := settledWrites(ns)
		for i := 0; i < 5; i++ {
			reconciledAfter("keystoneservice", func() { touchService(key) })
		}
		Consistently(func() map[string]int64 { return writesIn(ns) }, 2*time.Second).Should(Equal(before))
	})

	It("registers with the namespace's first KeystoneAPI, refuses a second, and leaves no finalizer on either", func() {
		keystone()
		first := types.NamespacedName{Namespace: ns, Name: "keystone"}
		other := externalKeystoneAPI(ns)
		other.Name = "second"
		other.Spec.Override.Service.Internal.EndpointURL = ptr.To(ks.URL)
		Expect(k8sClient.Create(ctx, other)).To(Succeed())
		By("the second is an Error naming the first, and observes nothing after its input")
		second := client.ObjectKeyFromObject(other)
		Eventually(func(g Gomega) {
			c := getAPI(second)(g).Status.Conditions.Get("InputReady")
			g.Expect(c).NotTo(BeNil())
			g.Expect(string(c.Reason)).To(Equal("InvalidInput"))
			g.Expect(string(c.Severity)).To(Equal("Error"))
			g.Expect(c.Message).To(ContainSubstring("KeystoneAPI keystone already deploys Keystone"))
		}).Should(Succeed())
		expectConditions(second, condition{"Ready", "False", "InvalidInput", "Error"},
			condition{"KeystoneEndpointReady", "Unknown", "Init", ""}, condition{"OpenStackConfigReady", "Unknown", "Init", ""})
		expectConditions(first, condition{"Ready", "True", "Ready", ""})

		By("a KeystoneService registers with the first")
		register()
		Expect(getAPI(first)(Default).Finalizers).To(ContainElement("keystone.openstack.org/keystoneservice-glance"))
		Expect(getAPI(second)(Default).Finalizers).NotTo(ContainElement("keystone.openstack.org/keystoneservice-glance"))

		By("deleting it releases the first KeystoneAPI")
		Expect(k8sClient.Delete(ctx, getService(key)(Default))).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, key, &keystonev1.KeystoneService{})) }).Should(BeTrue())
		for _, k := range []types.NamespacedName{first, second} {
			Expect(getAPI(k)(Default).Finalizers).To(ConsistOf("keystone.openstack.org/keystoneapi"), k.Name)
		}

		By("the first deleted, the second takes over")
		Expect(k8sClient.Delete(ctx, getAPI(first)(Default))).To(Succeed())
		// envtest runs no garbage collector: delete what the first owned, as it would.
		Expect(k8sClient.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "openstack-config"}})).To(Succeed())
		Expect(k8sClient.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "openstack-config-secret"}})).To(Succeed())
		expectConditions(second, condition{"Ready", "True", "Ready", ""})
	})

	It("removes its registration from Keystone on deletion and releases the KeystoneAPI", func() {
		keystone()
		register()
		api := &keystonev1.KeystoneAPI{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keystone"}, api)).To(Succeed())
		Expect(api.Finalizers).To(ContainElement("keystone.openstack.org/keystoneservice-glance"))
		Expect(k8sClient.Delete(ctx, getService(key)(Default))).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, key, &keystonev1.KeystoneService{})) }).Should(BeTrue())
		Expect(ks.List(fakekeystone.Services, nil)).To(BeEmpty())
		Expect(ks.List(fakekeystone.Users, map[string]any{"name": "glance"})).To(BeEmpty())
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keystone"}, api)).To(Succeed())
		Expect(api.Finalizers).NotTo(ContainElement("keystone.openstack.org/keystoneservice-glance"))
	})

	It("lets a KeystoneAPI with services be deleted without hanging", func() {
		keystone()
		register()
		api := &keystonev1.KeystoneAPI{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keystone"}, api)).To(Succeed())
		Expect(k8sClient.Delete(ctx, api)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(api), &keystonev1.KeystoneAPI{}))
		}).Should(BeTrue())
		expectServiceConditions(key, condition{"KeystoneAPIReady", "False", "DependencyNotFound", "Warning"})
		Expect(k8sClient.Delete(ctx, getService(key)(Default))).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, key, &keystonev1.KeystoneService{})) }).Should(BeTrue())
	})
})
