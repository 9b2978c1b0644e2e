package functional

import (
	"context"
	"maps"
	"net/http"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/controllers/keystoneservice"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/tests/support/fakekeystone"
	"github.com/keystone-stepwise/keystone-operator/tests/support/testutil"
	"github.com/keystone-stepwise/keystone-operator/tests/support/upstream"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
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
	// sharingNamespace makes another namespace whose KeystoneAPI is the same fake
	// Keystone, and whose Secret has another GlancePassword, other-password.
	sharingNamespace := func() string {
		GinkgoHelper()
		other := newNamespace()
		api := externalKeystoneAPI(other)
		api.Spec.Override.Service.Internal.EndpointURL = ptr.To(ks.URL)
		Expect(k8sClient.Create(ctx, api)).To(Succeed())
		createSecret(other, "osp-secret", map[string]string{"AdminPassword": "secret-admin", "GlancePassword": "other-password"})
		return other
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
		Expect(eventReasons(ns, "glance")).NotTo(ContainElements("ServiceCreated", "UserCreated", "RoleCreated", "AssignUserRoleCreated"),
			"Keystone's answer to each write confirms its step: no round shows it as still in progress")

		expectRelated(serviceRelated(key), secretNamed(ns, "osp-secret"))
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

	It("adopts a service and a user that already exist, never sets the user's password, and leaves them in Keystone when it goes", func() {
		keystone()
		id := ks.Create(fakekeystone.Services, map[string]any{"type": "image", "name": "glance", "enabled": true})
		userID := ks.Create(fakekeystone.Users, map[string]any{"name": "glance", "domain_id": "default", "password": "old"})
		Expect(k8sClient.Create(ctx, keystoneService(ns))).To(Succeed())
		expectServiceConditions(key, condition{"ServiceUserReady", "False", "PasswordConflict", "Warning"})
		Expect(getService(key)(Default).Status.Conditions.Get("ServiceUserReady").Message).To(ContainSubstring(
			"user glance existed before and is not this owner's: its password is never set here"))
		Expect(canAuthenticate(ks.URL, "glance", "old")).To(BeTrue(), "the existing user's password is untouched")
		Expect(canAuthenticate(ks.URL, "glance", "glance-1")).To(BeFalse())
		Expect(ks.Requests()).NotTo(HaveKey("POST /v3/users"), "its service was there: the user looked up first, no create tried")

		By("the Secret given the user's password: adopted")
		setSecretKey(ns, "osp-secret", "GlancePassword", "old")
		expectServiceConditions(key, condition{"Ready", "True", "Ready", ""})
		Expect(getService(key)(Default).Status.ServiceID).To(Equal(id))
		Expect(ks.List(fakekeystone.Services, nil)).To(HaveLen(1))
		Expect(getService(key)(Default).Status.Conditions.Get("KeystoneServiceReady").Message).To(ContainSubstring("adopted"))
		Expect(getService(key)(Default).Status.Conditions.Get("ServiceUserReady").Message).To(ContainSubstring("checked, never set"))
		Expect(k8sClient.Delete(ctx, getService(key)(Default))).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, key, &keystonev1.KeystoneService{})) }).Should(BeTrue())
		Expect(ks.List(fakekeystone.Services, map[string]any{"id": id})).To(HaveLen(1), "what it did not create stays")
		Expect(ks.List(fakekeystone.Users, map[string]any{"id": userID})).To(HaveLen(1))
	})

	It("removes the previous service and user when serviceType, serviceName or serviceUser change, and revokes removed roles", func() {
		keystone()
		createSecret(ns, "ep-secret", map[string]string{"AdminPassword": "unused"})
		register()
		first := getService(key)(Default).Status.ServiceID
		Expect(ks.List(fakekeystone.Services, map[string]any{"id": first})[0]).To(
			HaveKeyWithValue("keystone_operator_owner", HavePrefix("KeystoneService/"+ns+"/glance/")), "marked in Keystone")
		Expect(k8sClient.Create(ctx, keystoneEndpoint(ns))).To(Succeed())
		epKey := types.NamespacedName{Namespace: ns, Name: "glance"}
		Eventually(func(g Gomega) {
			g.Expect(getEndpoint(epKey)(g).Status.Conditions.Get("Ready")).To(HaveField("Status", corev1.ConditionTrue))
		}).Should(Succeed())

		By("a new type and name: the old service goes (its endpoints with it), the endpoints follow")
		before := ks.Requests()
		updateService(key, func(s *keystonev1.KeystoneService) { s.Spec.ServiceType, s.Spec.ServiceName = "image-v2", "glance2" })
		Eventually(func() []map[string]any { return ks.List(fakekeystone.Services, map[string]any{"id": first}) }).Should(BeEmpty())
		expectServiceConditions(key, condition{"Ready", "True", "Ready", ""})
		Expect(ks.RequestsSince(before)).NotTo(HaveKey("POST /v3/users"),
			"a service created while the status names a previous one is no first registration: its user is looked up first")
		second := getService(key)(Default).Status.ServiceID
		Expect(ks.List(fakekeystone.Services, nil)).To(HaveLen(1))
		Eventually(func() []map[string]any { return ks.List(fakekeystone.Endpoints, map[string]any{"service_id": second}) }).Should(HaveLen(2))
		Expect(ks.List(fakekeystone.Endpoints, nil)).To(HaveLen(2))

		By("a new user: the old one goes")
		oldUser := ks.List(fakekeystone.Users, map[string]any{"name": "glance"})[0]["id"]
		updateService(key, func(s *keystonev1.KeystoneService) { s.Spec.ServiceUser = "glance2" })
		Eventually(func() []map[string]any { return ks.List(fakekeystone.Users, map[string]any{"name": "glance"}) }).Should(BeEmpty())
		expectServiceConditions(key, condition{"Ready", "True", "Ready", ""})
		Expect(canAuthenticate(ks.URL, "glance2", "glance-1")).To(BeTrue())
		Expect(getService(key)(Default).Annotations).To(HaveKeyWithValue(keystoneservice.UserAnnotation, "glance2"))
		Expect(ks.List(fakekeystone.Users, map[string]any{"id": oldUser})).To(BeEmpty())

		By("a role removed from the spec is revoked")
		user := ks.List(fakekeystone.Users, map[string]any{"name": "glance2"})[0]["id"].(string)
		project := ks.List(fakekeystone.Projects, map[string]any{"name": "service"})[0]["id"].(string)
		admin := ks.List(fakekeystone.Roles, map[string]any{"name": "admin"})[0]["id"].(string)
		Expect(ks.Assigned(project, user, admin)).To(BeTrue())
		updateService(key, func(s *keystonev1.KeystoneService) { s.Spec.Roles = []string{"service"} })
		Eventually(func() bool { return ks.Assigned(project, user, admin) }).Should(BeFalse())
		expectServiceConditions(key, condition{"Ready", "True", "Ready", ""})
	})

	It("records its user with its finalizer, in one patch, and the password's source on the user in Keystone", func() {
		keystone()
		before := settledWrites(ns)
		register()
		after := settledWrites(ns)
		path := "/apis/keystone.openstack.org/v1beta1/namespaces/" + ns + "/keystoneservices/glance"
		Expect(after["PATCH "+path]-before["PATCH "+path]).To(BeEquivalentTo(1), "its finalizer and its user's record, together")
		Expect(after["PATCH "+path+"/status"] - before["PATCH "+path+"/status"]).To(BeEquivalentTo(1))
		svc := getService(key)(Default)
		Expect(svc.Annotations).To(HaveKeyWithValue(keystoneservice.UserAnnotation, "glance"))
		Expect(svc.Finalizers).To(ContainElement(keystoneservice.Finalizer))
		secret := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "osp-secret"}, secret)).To(Succeed())
		user := ks.List(fakekeystone.Users, map[string]any{"name": "glance"})[0]
		Expect(user).To(HaveKeyWithValue(identity.PasswordFromAttribute, string(secret.UID)+"/"+secret.ResourceVersion+"#GlancePassword"))

		By("a changed Secret: the password and its source are set in one request")
		before = settledWrites(ns)
		requests := ks.Requests()
		setSecretKey(ns, "osp-secret", "GlancePassword", "glance-2")
		Eventually(func() bool { return canAuthenticate(ks.URL, "glance", "glance-2") }).Should(BeTrue())
		quiet(ks)
		Expect(ks.RequestsSince(requests)).To(HaveKeyWithValue("PATCH /v3/users", 1))
		after = settledWrites(ns)
		Expect(after["PATCH "+path]).To(Equal(before["PATCH "+path]), "nothing to record on the KeystoneService")
	})

	It("moves the records of an earlier version to the user's name, removing the user they name when it is another", func() {
		keystone()
		// An earlier version recorded the ID of the user it registered and the Secret
		// version of its password on the KeystoneService; serviceUser changed since.
		// Marked by a KeystoneService of that name before this one, in this cluster.
		previous := ks.Create(fakekeystone.Users, map[string]any{"name": "glance-old", "domain_id": "default", "password": "x",
			identity.OwnerAttribute: "KeystoneService/" + ns + "/glance/earlier-uid@" + clusterID()})
		svc := keystoneService(ns)
		svc.Annotations = map[string]string{"keystone.openstack.org/user-id": previous, "keystone.openstack.org/password-set-from": "a/1"}
		Expect(k8sClient.Create(ctx, svc)).To(Succeed())
		expectServiceConditions(key, condition{"Ready", "True", "Ready", ""})
		Expect(ks.List(fakekeystone.Users, map[string]any{"id": previous})).To(BeEmpty())
		Expect(canAuthenticate(ks.URL, "glance", "glance-1")).To(BeTrue())
		annotations := getService(key)(Default).Annotations
		Expect(annotations).To(HaveKeyWithValue(keystoneservice.UserAnnotation, "glance"))
		Expect(annotations).NotTo(HaveKey("keystone.openstack.org/user-id"))
		Expect(annotations).NotTo(HaveKey("keystone.openstack.org/password-set-from"))
	})

	It("claims what its predecessor of the same name registered in this cluster, and joins what another region registered", func() {
		keystone()
		By("a user of the same namespace and name, registered by another cluster sharing this Keystone (another region)")
		other := ks.Create(fakekeystone.Users, map[string]any{"name": "glance", "domain_id": "default", "password": "other-region",
			identity.OwnerAttribute: "KeystoneService/" + ns + "/glance/other-uid@other-cluster-uid"})
		Expect(k8sClient.Create(ctx, keystoneService(ns))).To(Succeed())
		expectServiceConditions(key, condition{"ServiceUserReady", "False", "PasswordConflict", "Warning"})
		Expect(getService(key)(Default).Status.Conditions.Get("ServiceUserReady").Message).To(ContainSubstring(
			"user glance has a password set by KeystoneService/" + ns + "/glance of the cluster other-cluster-uid, and it is not this one"))
		Expect(canAuthenticate(ks.URL, "glance", "other-region")).To(BeTrue(), "its password untouched")
		Expect(ks.List(fakekeystone.Users, map[string]any{"id": other})[0]).NotTo(HaveKey(identity.OwnersAttribute),
			"not among its owners without the password: it could otherwise keep the user after the other region")
		By("the Secret holds the other region's password: joined, recorded among the owners")
		setSecretKey(ns, "osp-secret", "GlancePassword", "other-region")
		expectServiceConditions(key, condition{"ServiceUserReady", "True", "Ready", ""})
		Expect(ks.List(fakekeystone.Users, map[string]any{"id": other})[0]).To(HaveKeyWithValue(identity.OwnersAttribute,
			HaveKey("KeystoneService/"+ns+"/glance/"+string(getService(key)(Default).UID)+"@"+clusterID())), "joined its owners of record")
		Expect(k8sClient.Delete(ctx, getService(key)(Default))).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, key, &keystonev1.KeystoneService{})) }).Should(BeTrue())
		Expect(ks.List(fakekeystone.Users, map[string]any{"id": other})).To(HaveLen(1), "never deleted while the other region owns it")
		Expect(ks.List(fakekeystone.Users, map[string]any{"id": other})[0]).To(HaveKeyWithValue(identity.OwnersAttribute, BeNil()),
			"left its owners of record, the last: the record removed (null)")

		By("the same user marked by this cluster's earlier glance: claimed, its password set")
		ks.Delete(fakekeystone.Users, other)
		mine := ks.Create(fakekeystone.Users, map[string]any{"name": "glance", "domain_id": "default", "password": "old",
			identity.OwnerAttribute: "KeystoneService/" + ns + "/glance/earlier-uid@" + clusterID()})
		setSecretKey(ns, "osp-secret", "GlancePassword", "glance-1")
		register()
		Expect(canAuthenticate(ks.URL, "glance", "glance-1")).To(BeTrue())
		Expect(ks.List(fakekeystone.Users, map[string]any{"id": mine})[0]).To(HaveKeyWithValue(identity.OwnerAttribute,
			"KeystoneService/"+ns+"/glance/"+string(getService(key)(Default).UID)+"@"+clusterID()))
	})

	It("removes on deletion a previous user its record still names (a change of serviceUser cut short)", func() {
		keystone()
		register()
		previous := ks.Create(fakekeystone.Users, map[string]any{"name": "glance-previous", "domain_id": "default", "password": "x",
			identity.OwnerAttribute: "KeystoneService/" + ns + "/glance/" + string(getService(key)(Default).UID)})
		update(key, &keystonev1.KeystoneService{}, func(s *keystonev1.KeystoneService) {
			s.Annotations[keystoneservice.UserAnnotation] = "glance-previous"
		})
		Expect(k8sClient.Delete(ctx, getService(key)(Default))).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, key, &keystonev1.KeystoneService{})) }).Should(BeTrue())
		Expect(ks.List(fakekeystone.Users, map[string]any{"id": previous})).To(BeEmpty())
		Expect(ks.List(fakekeystone.Users, map[string]any{"name": "glance"})).To(BeEmpty())
	})

	It("registers a service and its endpoints with 8 Keystone requests, resyncs with 3, and looks a deleted role up again", func() {
		keystone()
		register() // the first service of a Keystone looks up the service project and the roles
		Expect(k8sClient.Create(ctx, keystoneEndpoint(ns))).To(Succeed())
		expectEndpointConditions(key, condition{"Ready", "True", "Ready", ""})

		By("a second service, with its KeystoneEndpoint")
		quiet(ks)
		before := ks.Requests()
		second := keystoneService(ns)
		second.Name, second.Spec.ServiceName, second.Spec.ServiceType, second.Spec.ServiceUser = "nova", "nova", "compute", "nova"
		Expect(k8sClient.Create(ctx, second)).To(Succeed())
		ep := keystoneEndpoint(ns)
		ep.Name, ep.Spec.ServiceName = "nova", "nova"
		Expect(k8sClient.Create(ctx, ep)).To(Succeed())
		novaKey := client.ObjectKeyFromObject(second)
		expectServiceConditions(novaKey, condition{"Ready", "True", "Ready", ""})
		expectEndpointConditions(novaKey, condition{"Ready", "True", "Ready", ""})
		quiet(ks)
		Expect(ks.RequestsSince(before)).To(Equal(map[string]int{
			"GET /v3/services": 1, "POST /v3/services": 1, // looked up (with the others of its type), created
			"POST /v3/users":    1, // created without a look-up first (its first service): it has no role yet
			"PUT /v3/projects":  2, // its two roles; the project and role IDs are known
			"GET /v3/endpoints": 1, "POST /v3/endpoints": 2,
		}))

		By("a forced reconcile of the converged service")
		before = ks.Requests()
		touchService(novaKey)
		quiet(ks)
		Expect(ks.RequestsSince(before)).To(Equal(map[string]int{
			"GET /v3/services": 1, "GET /v3/users": 1, "GET /v3/role_assignments": 1,
		}))

		By("the role service deleted behind the operator's back: its cached ID is stale")
		role := ks.List(fakekeystone.Roles, map[string]any{"name": "service"})[0]["id"].(string)
		ks.Delete(fakekeystone.Roles, role)
		touchService(novaKey)
		Eventually(func() []map[string]any { return ks.List(fakekeystone.Roles, map[string]any{"name": "service"}) }).Should(HaveLen(1))
		expectServiceConditions(novaKey, condition{"Ready", "True", "Ready", ""})
		user := ks.List(fakekeystone.Users, map[string]any{"name": "nova"})[0]["id"].(string)
		project := ks.List(fakekeystone.Projects, map[string]any{"name": "service"})[0]["id"].(string)
		recreated := ks.List(fakekeystone.Roles, map[string]any{"name": "service"})[0]["id"].(string)
		Eventually(func() bool { return ks.Assigned(project, user, recreated) }).Should(BeTrue())
		Expect(eventReasons(ns, "nova")).NotTo(ContainElement("ServiceUnavailable"), "a stale ID is looked up again in the same round")
	})

	It("refuses a user another KeystoneService registered, and never gives a service the admin user", func() {
		keystone()
		register()
		By("a KeystoneService of another namespace sharing this Keystone, with the same serviceUser")
		other := sharingNamespace()
		beforeIntruder := ks.Requests()
		intruder := keystoneService(other)
		intruder.Spec.ServiceType, intruder.Spec.ServiceName = "image-other", "glance-other"
		Expect(k8sClient.Create(ctx, intruder)).To(Succeed())
		otherKey := client.ObjectKeyFromObject(intruder)
		expectServiceConditions(otherKey, condition{"ServiceUserReady", "False", "InvalidInput", "Error"})
		Expect(getService(otherKey)(Default).Status.Conditions.Get("ServiceUserReady").Message).To(
			ContainSubstring("user glance is registered by KeystoneService/" + ns + "/glance"))
		intruderRequests := ks.RequestsSince(beforeIntruder)
		Expect(intruderRequests).To(HaveKeyWithValue("POST /v3/users", 1),
			"its first service's round creates the user first, and Keystone refuses the name")
		Expect(intruderRequests).NotTo(HaveKey("PATCH /v3/users"))
		Expect(canAuthenticate(ks.URL, "glance", "glance-1")).To(BeTrue(), "the first one's password is untouched")

		By("a KeystoneService of another namespace with the same service and its own user")
		serviceID := getService(key)(Default).Status.ServiceID
		before := ks.Requests()
		twin := keystoneService(other)
		twin.Name, twin.Spec.ServiceUser, twin.Spec.ServiceDescription = "twin", "glance-twin", "the twin's"
		Expect(k8sClient.Create(ctx, twin)).To(Succeed())
		twinKey := client.ObjectKeyFromObject(twin)
		expectServiceConditions(twinKey, condition{"KeystoneServiceReady", "False", "InvalidInput", "Error"})
		Expect(getService(twinKey)(Default).Status.Conditions.Get("KeystoneServiceReady").Message).To(
			ContainSubstring("service image/glance is registered by KeystoneService/" + ns + "/glance"))
		Expect(getService(twinKey)(Default).Status.ServiceID).To(BeEmpty(), "its ID is not handed out")
		for req, n := range ks.Requests() {
			if strings.HasPrefix(req, "PATCH /v3/services") || strings.HasPrefix(req, "DELETE /v3/services") {
				Expect(n).To(Equal(before[req]), req)
			}
		}
		Expect(k8sClient.Delete(ctx, getService(twinKey)(Default))).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, twinKey, &keystonev1.KeystoneService{})) }).Should(BeTrue())
		Expect(ks.List(fakekeystone.Services, map[string]any{"id": serviceID})).To(HaveLen(1), "deleting it leaves the first one's service")

		By("the admin user as serviceUser")
		before = ks.Requests()
		admin := keystoneService(ns)
		admin.Name, admin.Spec.ServiceName, admin.Spec.ServiceType, admin.Spec.ServiceUser = "evil", "evil", "evil", "admin"
		Expect(k8sClient.Create(ctx, admin)).To(Succeed())
		adminKey := client.ObjectKeyFromObject(admin)
		expectServiceConditions(adminKey, condition{"Ready", "False", "NotAllowed", "Error"}, condition{"InputReady", "False", "NotAllowed", "Error"})
		Expect(getService(adminKey)(Default).Status.Conditions.Get("InputReady").Message).To(ContainSubstring("admin user of KeystoneAPI keystone"))
		Expect(canAuthenticate(ks.URL, "admin", "secret-admin")).To(BeTrue())
		for req, n := range ks.Requests() {
			if strings.HasPrefix(req, "PATCH /v3/users") || strings.HasPrefix(req, "POST /v3/users") {
				Expect(n).To(Equal(before[req]), req)
			}
		}
		Expect(k8sClient.Delete(ctx, admin)).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, adminKey, &keystonev1.KeystoneService{})) }).Should(BeTrue())
		Expect(canAuthenticate(ks.URL, "admin", "secret-admin")).To(BeTrue(), "deleting it leaves the admin alone")
	})

	It("never takes a person's user with federated identities, and makes a local user beside one Keystone made at a federated login", func() {
		keystone()
		person := ks.Create(fakekeystone.Users, map[string]any{"name": "glance", "domain_id": "default", "password": "person-pw",
			"enabled": true, "federated": []any{map[string]any{"idp_id": "idp",
				"protocols": []any{map[string]any{"protocol_id": "mapped", "unique_id": "glance@idp"}}}}})
		Expect(k8sClient.Create(ctx, keystoneService(ns))).To(Succeed())
		expectServiceConditions(key, condition{"ServiceUserReady", "False", "InvalidInput", "Error"})
		Expect(getService(key)(Default).Status.Conditions.Get("ServiceUserReady").Message).To(Equal("spec.serviceUser: user glance " +
			"is a user with federated identities (a person's, who logs in through an identity provider), which is never taken as " +
			"a service user; choose another name (nothing is written)"))
		Expect(ks.List(fakekeystone.Users, map[string]any{"id": person})).To(ConsistOf(Not(HaveKey("keystone_operator_owner"))))
		Expect(canAuthenticate(ks.URL, "glance", "person-pw")).To(BeTrue(), "its password untouched")

		By("another serviceUser, whose name a user of an identity provider has, gets a local user beside it")
		federated := ks.CreateFederatedUser("glance-svc", "default")
		Eventually(func(g Gomega) {
			svc := getService(key)(g)
			svc.Spec.ServiceUser = "glance-svc"
			g.Expect(k8sClient.Update(ctx, svc)).To(Succeed())
		}).Should(Succeed())
		expectServiceConditions(key, condition{"Ready", "True", "Ready", ""})
		Expect(ks.List(fakekeystone.Users, map[string]any{"name": "glance-svc"})).To(ConsistOf(
			HaveKeyWithValue("id", federated), HaveKey("keystone_operator_owner")))
		Expect(canAuthenticate(ks.URL, "glance-svc", "glance-1")).To(BeTrue())
		Expect(ks.List(fakekeystone.Users, map[string]any{"id": federated})).To(ConsistOf(Not(HaveKey("keystone_operator_owner"))))
		Expect(ks.List(fakekeystone.Users, map[string]any{"id": person})).To(ConsistOf(Not(HaveKey("keystone_operator_owner"))),
			"the earlier serviceUser's person is left as it was")
		Expect(canAuthenticate(ks.URL, "glance", "person-pw")).To(BeTrue())

		By("deleting the KeystoneService removes its own user only")
		Expect(k8sClient.Delete(ctx, getService(key)(Default))).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, key, &keystonev1.KeystoneService{})) }).Should(BeTrue())
		Expect(ks.List(fakekeystone.Users, map[string]any{"name": "glance-svc"})).To(ConsistOf(HaveKeyWithValue("id", federated)))
		Expect(ks.List(fakekeystone.Users, map[string]any{"id": person})).To(HaveLen(1))
	})

	// refusedElsewhere makes another namespace sharing the fake Keystone, with two
	// KeystoneServices refused for what the namespace's glance holds: twin asks for its
	// service (image/glance, with its own user), intruder for its user glance. It returns
	// their keys.
	refusedElsewhere := func() (types.NamespacedName, types.NamespacedName) {
		GinkgoHelper()
		other := sharingNamespace()
		twin := keystoneService(other)
		twin.Name, twin.Spec.ServiceUser = "twin", "glance-twin"
		Expect(k8sClient.Create(ctx, twin)).To(Succeed())
		intruder := keystoneService(other)
		intruder.Spec.ServiceType, intruder.Spec.ServiceName = "image-other", "glance-other"
		Expect(k8sClient.Create(ctx, intruder)).To(Succeed())
		twinKey, intruderKey := client.ObjectKeyFromObject(twin), client.ObjectKeyFromObject(intruder)
		expectServiceConditions(twinKey, condition{"KeystoneServiceReady", "False", "InvalidInput", "Error"})
		expectServiceConditions(intruderKey, condition{"ServiceUserReady", "False", "InvalidInput", "Error"})
		return twinKey, intruderKey
	}
	// The suite's manager reads Keystone's records for other clusters' changes once an
	// hour (RegionRecheck): in these two, only what this cluster sees can wake them.

	It("goes on at once when the KeystoneService of another namespace it was refused for is deleted", func() {
		keystone()
		register()
		twinKey, intruderKey := refusedElsewhere()

		By("the first namespace lets its glance go: both go on")
		Expect(k8sClient.Delete(ctx, getService(key)(Default))).To(Succeed())
		expectServiceConditions(twinKey, condition{"Ready", "True", "Ready", ""})
		expectServiceConditions(intruderKey, condition{"Ready", "True", "Ready", ""})
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, key, &keystonev1.KeystoneService{}))).To(BeTrue())
		image := ks.List(fakekeystone.Services, map[string]any{"type": "image"})
		Expect(image).To(HaveLen(1))
		Expect(image[0]["id"]).To(Equal(getService(twinKey)(Default).Status.ServiceID))
		Expect(canAuthenticate(ks.URL, "glance", "other-password")).To(BeTrue(), "the user glance is the other namespace's now")
	})

	It("goes on at once when the KeystoneService it was refused for moves to another service, or another user", func() {
		keystone()
		register()
		twinKey, intruderKey := refusedElsewhere()

		By("the first namespace's glance changes its serviceType: its image/glance goes, and twin goes on")
		svc := getService(key)(Default)
		svc.Spec.ServiceType = "image-a"
		Expect(k8sClient.Update(ctx, svc)).To(Succeed())
		expectServiceConditions(twinKey, condition{"Ready", "True", "Ready", ""})
		expectServiceConditions(key, condition{"Ready", "True", "Ready", ""})
		Expect(getService(intruderKey)(Default).Status.Conditions.Get("ServiceUserReady").Reason).To(BeEquivalentTo("InvalidInput"),
			"the user glance is still the first one's")

		By("then its serviceUser: the user glance goes, and intruder goes on")
		svc = getService(key)(Default)
		svc.Spec.ServiceUser = "glance-a"
		Expect(k8sClient.Update(ctx, svc)).To(Succeed())
		expectServiceConditions(intruderKey, condition{"Ready", "True", "Ready", ""})
		Expect(canAuthenticate(ks.URL, "glance", "other-password")).To(BeTrue(), "the user glance is the other namespace's now")
		Expect(canAuthenticate(ks.URL, "glance-a", "glance-1")).To(BeTrue())
	})

	// upstreamRegistered lays out a KeystoneService keystone-operator registered: the
	// service and the user in Keystone, unmarked, and svc with keystone-operator's
	// finalizer and status (upstream.ServiceStatus). A status cannot be written with the
	// object, and a round of the operator in flight may overwrite it (keystone-operator's
	// is there before this operator starts): written until the operator carries it, each
	// time followed by a change of an annotation (not of the spec) that has it start again
	// from that status. It returns the service's ID.
	upstreamRegistered := func(svc *keystonev1.KeystoneService, password string) string {
		GinkgoHelper()
		id := ks.Create(fakekeystone.Services, map[string]any{"type": svc.Spec.ServiceType, "name": svc.Spec.ServiceName, "enabled": true})
		ks.Create(fakekeystone.Users, map[string]any{"name": svc.Spec.ServiceUser, "domain_id": "default", "password": password})
		svc.Finalizers = []string{"openstack.org/keystoneservice"} // keystone-operator's own
		Expect(k8sClient.Create(ctx, svc)).To(Succeed())
		svcKey := client.ObjectKeyFromObject(svc)
		status := upstream.ServiceStatus(svc, id)
		Eventually(func(g Gomega) {
			current := getService(svcKey)(g)
			carried := current.Status.Conditions.Get("KeystoneServiceOSUserReady") != nil
			ours := current.Status.Conditions.Get("KeystoneServiceReady") != nil
			if carried && ours {
				return // the operator wrote its status, carrying keystone-operator's
			}
			if !carried && (ks.Marked(fakekeystone.Users, svc.Spec.ServiceUser) || len(ks.List(fakekeystone.Users, map[string]any{"name": svc.Spec.ServiceUser})) == 0) {
				return // used already: claimed or removed
			}
			if !carried {
				current.Status = status
				g.Expect(k8sClient.Status().Update(ctx, current)).To(Succeed())
			}
			poke(g, current)
			g.Expect(false).To(BeTrue(), "the operator has not written its status over keystone-operator's yet")
		}).Should(Succeed())
		return id
	}

	It("waits for a password that is empty, and sets no user meanwhile; takes the value byte for byte once there", func() {
		keystone()
		setSecretKey(ns, "osp-secret", "GlancePassword", "")
		Expect(k8sClient.Create(ctx, keystoneService(ns))).To(Succeed())
		expectServiceConditions(key, condition{"InputReady", "False", "DependencyNotFound", "Warning"})
		Expect(ks.List(fakekeystone.Users, map[string]any{"name": "glance"})).To(BeEmpty(), "no user with an empty password")
		setSecretKey(ns, "osp-secret", "GlancePassword", " spaced password\n")
		expectServiceConditions(key, condition{"Ready", "True", "Ready", ""})
		Expect(canAuthenticate(ks.URL, "glance", " spaced password\n")).To(BeTrue(), "not trimmed, as keystone-operator reads it")
	})

	It("takes over what keystone-operator registered, and removes it on deletion", func() {
		keystone()
		id := upstreamRegistered(keystoneService(ns), "glance-1")
		Eventually(func(g Gomega) {
			g.Expect(ks.Marked(fakekeystone.Services, "glance")).To(BeTrue(), "the service claimed")
			g.Expect(ks.Marked(fakekeystone.Users, "glance")).To(BeTrue(), "the user claimed")
		}).Should(Succeed())
		expectServiceConditions(key, condition{"Ready", "True", "Ready", ""})
		Expect(getService(key)(Default).Status.ServiceID).To(Equal(id))
		Eventually(func() bool {
			return getService(key)(Default).Status.Conditions.Get("KeystoneServiceOSUserReady") == nil
		}).Should(BeTrue(), "keystone-operator's record is dropped once the user and the service carry our mark")
		Expect(ks.List(fakekeystone.Services, nil)[0]).To(HaveKeyWithValue("keystone_operator_owner", HavePrefix("KeystoneService/")))
		Expect(ks.List(fakekeystone.Users, map[string]any{"name": "glance"})[0]).To(HaveKeyWithValue("keystone_operator_owner", HavePrefix("KeystoneService/")))
		Expect(k8sClient.Delete(ctx, getService(key)(Default))).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, key, &keystonev1.KeystoneService{})) }).Should(BeTrue())
		Expect(ks.List(fakekeystone.Services, nil)).To(BeEmpty())
		Expect(ks.List(fakekeystone.Users, map[string]any{"name": "glance"})).To(BeEmpty())
	})

	Describe("keeps keystone-operator's proof until it is used", func() {
		// pending lays out keystone-operator's registration of a KeystoneService whose
		// password Secret key does not exist: the operator stops at InputReady, before its
		// claim, and keeps keystone-operator's conditions.
		pending := func() (string, *keystonev1.KeystoneService) {
			GinkgoHelper()
			keystone()
			svc := keystoneService(ns)
			svc.Spec.PasswordSelector = "PendingPassword"
			id := upstreamRegistered(svc, "glance-1")
			expectServiceConditions(key, condition{"InputReady", "False", "DependencyNotFound", "Warning"})
			Expect(ks.Marked(fakekeystone.Users, "glance")).To(BeFalse(), "nothing claimed yet")
			return id, svc
		}
		deleted := func() {
			GinkgoHelper()
			Expect(k8sClient.Delete(ctx, getService(key)(Default))).To(Succeed())
			Eventually(gone(key, &keystonev1.KeystoneService{})).Should(BeTrue())
		}

		It("deleted before its claim ran, after a change of its spec: keystone-operator's service and user are removed", func() {
			pending()
			// The generation moves on twice: a change of the spec, then the deletion.
			updateService(key, func(s *keystonev1.KeystoneService) { s.Spec.ServiceDescription = "changed before the claim" })
			Eventually(func(g Gomega) {
				g.Expect(getService(key)(g).Status.Conditions.Get("KeystoneServiceOSServiceReady")).NotTo(BeNil())
				g.Expect(getService(key)(g).Status.Conditions.Get("KeystoneServiceOSUserReady")).NotTo(BeNil())
			}).Should(Succeed())
			Consistently(func(g Gomega) {
				g.Expect(getService(key)(g).Status.Conditions.Get("KeystoneServiceOSUserReady")).NotTo(BeNil(), "the proof is kept")
			}, time.Second).Should(Succeed())
			deleted()
			Expect(ks.List(fakekeystone.Services, nil)).To(BeEmpty(), "keystone-operator's service removed, as it would have")
			Expect(ks.List(fakekeystone.Users, map[string]any{"name": "glance"})).To(BeEmpty(), "keystone-operator's user removed")
		})

		It("its KeystoneEndpoint takes keystone-operator's endpoints once the service is claimed: the same ones, updated in place, and removed at its deletion", func() {
			id, _ := pending()
			old := map[string]string{}
			for iface, url := range map[string]string{"public": "http://old-public:9292", "internal": "http://old-internal:9292"} {
				old[iface] = ks.Create(fakekeystone.Endpoints, map[string]any{"service_id": id, "interface": iface, "url": url,
					"region_id": "regionOne"})
			}
			ep := keystoneEndpoint(ns)
			ep.Finalizers = []string{"openstack.org/keystoneendpoint"} // keystone-operator's own
			Expect(k8sClient.Create(ctx, ep)).To(Succeed())
			epKey := client.ObjectKeyFromObject(ep)
			// Written as keystone-operator left it, while the KeystoneService (not Ready)
			// holds the KeystoneEndpoint back: a write of the operator's own meanwhile keeps
			// what it does not decide.
			Eventually(func(g Gomega) {
				current := getEndpoint(epKey)(g)
				g.Expect(current.Status.Conditions).NotTo(BeEmpty(), "the operator's first status")
				if current.Status.EndpointIDs == nil {
					current.Status = upstream.EndpointStatus(current, id, old)
					g.Expect(k8sClient.Status().Update(ctx, current)).To(Succeed())
				}
				g.Expect(getEndpoint(epKey)(g).Status.EndpointIDs).To(Equal(old))
			}).Should(Succeed())
			setSecretKey(ns, "osp-secret", "PendingPassword", "glance-1")
			expectServiceConditions(key, condition{"Ready", "True", "Ready", ""})
			expectEndpointConditions(epKey, condition{"Ready", "True", "Ready", ""})
			Expect(getEndpoint(epKey)(Default).Status.EndpointIDs).To(Equal(old), "the same endpoints")
			Expect(endpointsIn(ks, id)).To(Equal(map[string]string{old["public"]: "public " + glanceEndpoints["public"],
				old["internal"]: "internal " + glanceEndpoints["internal"]}), "updated in place, no second set")
			Expect(k8sClient.Delete(ctx, getEndpoint(epKey)(Default))).To(Succeed())
			Eventually(gone(epKey, &keystonev1.KeystoneEndpoint{})).Should(BeTrue())
			Expect(endpointsIn(ks, id)).To(BeEmpty(), "removed with the KeystoneEndpoint, the service staying")
			Expect(ks.List(fakekeystone.Services, map[string]any{"id": id})).To(HaveLen(1))
		})

		It("its serviceUser changed before the claim: keystone-operator's user goes, the new one is this suite's", func() {
			id, _ := pending()
			updateService(key, func(s *keystonev1.KeystoneService) { s.Spec.ServiceUser = "glance-renamed" })
			setSecretKey(ns, "osp-secret", "PendingPassword", "glance-2")
			expectServiceConditions(key, condition{"Ready", "True", "Ready", ""})
			Expect(ks.List(fakekeystone.Users, map[string]any{"name": "glance"})).To(BeEmpty(), "the user keystone-operator registered is gone")
			Expect(ks.Marked(fakekeystone.Users, "glance-renamed")).To(BeTrue())
			Expect(ks.Marked(fakekeystone.Services, "glance")).To(BeTrue(), "the service keystone-operator recorded claimed")
			Expect(getService(key)(Default).Status.ServiceID).To(Equal(id))
			Eventually(func() lc.Conditions { return getService(key)(Default).Status.Conditions }).Should(
				Not(ContainElement(HaveField("Type", BeEquivalentTo("KeystoneServiceOSUserReady")))), "used, then dropped")
			deleted()
			Expect(ks.List(fakekeystone.Services, nil)).To(BeEmpty())
			Expect(ks.List(fakekeystone.Users, nil)).To(HaveLen(1), "only the admin is left")
		})

		It("its KeystoneAPI, not Ready, deleted with it (external): keystone-operator's service and user are removed", func() {
			pending()
			apiKey := types.NamespacedName{Namespace: ns, Name: "keystone"}
			// The admin's Secret goes first, as in a namespace's deletion: the KeystoneAPI is
			// no longer Ready, and the registration deletes with the cleanup copy.
			Expect(k8sClient.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "osp-secret"}})).To(Succeed())
			expectConditions(apiKey, condition{"Ready", "False", "DependencyNotFound", "Warning"})
			Expect(k8sClient.Delete(ctx, getAPI(apiKey)(Default))).To(Succeed())
			deleted()
			Eventually(gone(apiKey, &keystonev1.KeystoneAPI{})).Should(BeTrue())
			Expect(ks.List(fakekeystone.Services, nil)).To(BeEmpty())
			Expect(ks.List(fakekeystone.Users, map[string]any{"name": "glance"})).To(BeEmpty())
		})
	})

	It("claims nothing on a forged finalizer alone: the service and user it found stay when it goes", func() {
		keystone()
		// What bootstrap made, and a user another cluster made without a mark.
		identityID := ks.Create(fakekeystone.Services, map[string]any{"type": "identity", "name": "keystone", "enabled": true})
		ks.Create(fakekeystone.Users, map[string]any{"name": "nova", "domain_id": "default", "password": "nova-elsewhere"})
		forged := keystoneService(ns)
		forged.Name, forged.Spec.ServiceName, forged.Spec.ServiceType, forged.Spec.ServiceUser = "forged", "keystone", "identity", "nova"
		forged.Finalizers = []string{"openstack.org/keystoneservice"} // keystone-operator's, put there by the tenant
		Expect(k8sClient.Create(ctx, forged)).To(Succeed())
		forgedKey := client.ObjectKeyFromObject(forged)
		// The user is another's: its password, which the tenant's Secret does not hold, is not set.
		expectServiceConditions(forgedKey, condition{"KeystoneServiceReady", "True", "Ready", ""},
			condition{"ServiceUserReady", "False", "PasswordConflict", "Warning"})
		Expect(getService(forgedKey)(Default).Status.ServiceID).To(Equal(identityID), "adopted, as any existing service")
		By("a second round with the adopted ID in status, asking for another description: still not claimed, never redefined")
		update(forgedKey, &keystonev1.KeystoneService{}, func(s *keystonev1.KeystoneService) { s.Spec.ServiceDescription = "again" })
		Eventually(func() int64 { return getService(forgedKey)(Default).Status.ObservedGeneration }).Should(Equal(int64(2)))
		expectServiceConditions(forgedKey, condition{"KeystoneServiceReady", "False", "InvalidInput", "Error"})
		Expect(getService(forgedKey)(Default).Status.Conditions.Get("KeystoneServiceReady").Message).To(ContainSubstring(
			`service identity/keystone existed before and is not this owner's: it has description "", enabled true, where this ` +
				`spec says description "again", enabled true, and it is never changed here`))
		Expect(ks.List(fakekeystone.Services, map[string]any{"type": "identity"})[0]).NotTo(HaveKey("description"))
		Expect(canAuthenticate(ks.URL, "nova", "nova-elsewhere")).To(BeTrue(), "the other cluster's user keeps its password")
		Expect(ks.List(fakekeystone.Services, map[string]any{"type": "identity"})[0]).NotTo(HaveKey("keystone_operator_owner"))
		Expect(ks.List(fakekeystone.Users, map[string]any{"name": "nova"})[0]).NotTo(HaveKey("keystone_operator_owner"))

		Expect(k8sClient.Delete(ctx, getService(forgedKey)(Default))).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, forgedKey, &keystonev1.KeystoneService{})) }).Should(BeTrue())
		Expect(ks.List(fakekeystone.Services, map[string]any{"type": "identity"})).To(HaveLen(1), "the identity service stays")
		Expect(ks.List(fakekeystone.Users, map[string]any{"name": "nova"})).To(HaveLen(1), "the other cluster's user stays")
	})

	It("removes everything from an external Keystone when the namespace's objects are deleted at once", func() {
		keystone()
		register()
		Expect(k8sClient.Create(ctx, keystoneEndpoint(ns))).To(Succeed())
		epKey := types.NamespacedName{Namespace: ns, Name: "glance"}
		Eventually(func(g Gomega) {
			g.Expect(getEndpoint(epKey)(g).Status.Conditions.Get("Ready")).To(HaveField("Status", corev1.ConditionTrue))
		}).Should(Succeed())
		apiKey := types.NamespacedName{Namespace: ns, Name: "keystone"}
		// What the namespace controller does (envtest runs none): every object deleted.
		for _, obj := range []client.Object{
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "osp-secret"}},
			getAPI(apiKey)(Default), getService(key)(Default), getEndpoint(epKey)(Default),
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "keystone-cleanup-credentials"}},
		} {
			Expect(k8sClient.Delete(ctx, obj)).To(Succeed())
		}
		for _, obj := range []client.Object{&keystonev1.KeystoneEndpoint{}, &keystonev1.KeystoneService{}, &keystonev1.KeystoneAPI{}} {
			Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, key, obj)) }).Should(BeTrue(), "%T", obj)
		}
		Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, apiKey, &keystonev1.KeystoneAPI{})) }).Should(BeTrue())
		Expect(ks.List(fakekeystone.Services, nil)).To(BeEmpty())
		Expect(ks.List(fakekeystone.Endpoints, nil)).To(BeEmpty())
		Expect(ks.List(fakekeystone.Users, map[string]any{"name": "glance"})).To(BeEmpty())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keystone-cleanup-credentials"}, &corev1.Secret{}))
		}).Should(BeTrue(), "its finalizer released")
	})

	Describe("with Keystone gone for good", func() {
		// setup registers a service, its endpoints and an application credential, then
		// takes Keystone away (an external Keystone decommissioned).
		setup := func() (types.NamespacedName, types.NamespacedName) {
			keystone()
			register()
			Expect(k8sClient.Create(ctx, keystoneEndpoint(ns))).To(Succeed())
			Expect(k8sClient.Create(ctx, applicationCredential(ns))).To(Succeed())
			acKey := types.NamespacedName{Namespace: ns, Name: "ac-glance"}
			expectAppCredConditions(acKey, condition{"Ready", "True", "Ready", ""})
			expectEndpointConditions(key, condition{"Ready", "True", "Ready", ""})
			ks.Close()
			return types.NamespacedName{Namespace: ns, Name: "keystone"}, acKey
		}
		orphaned := func(name string) string {
			events := &corev1.EventList{}
			Expect(k8sClient.List(ctx, events, client.InNamespace(ns))).To(Succeed())
			var out []string
			for _, e := range events.Items {
				if e.InvolvedObject.Name == name && e.Reason == "Orphaned" {
					out = append(out, e.Message)
				}
			}
			return strings.Join(out, "\n")
		}

		It("waits, saying how to finish, and, annotated, finishes once Keystone has been unreachable for the grace, naming what stays", func() {
			apiKey, acKey := setup()
			serviceID := getService(key)(Default).Status.ServiceID
			for _, obj := range []client.Object{getEndpoint(key)(Default), getService(key)(Default), getAppCred(acKey)(Default)} {
				Expect(k8sClient.Delete(ctx, obj)).To(Succeed())
			}
			Eventually(func(g Gomega) {
				c := getEndpoint(key)(g).Status.Conditions.Get("KeystoneServiceOSEndpointsReady")
				g.Expect(c.Message).To(ContainSubstring("to finish deleting and leave endpoints internal="))
				g.Expect(c.Message).To(ContainSubstring("valid in Keystone once Keystone has been unreachable or refusing for 5m0s, " +
					"annotate this object keystone.openstack.org/orphan-on-delete=true"))
			}).Should(Succeed())
			Eventually(func(g Gomega) {
				c := getAppCred(acKey)(g).Status.Conditions.Get("ApplicationCredentialCleanupReady")
				g.Expect(c.Message).To(ContainSubstring("application credentials of user glance (current "))
				g.Expect(c.Message).To(ContainSubstring("keystone.openstack.org/orphan-on-delete=true"))
			}).Should(Succeed())

			By("the KeystoneAPI annotated, not being deleted: it covers no registration")
			update(apiKey, &keystonev1.KeystoneAPI{}, func(a *keystonev1.KeystoneAPI) {
				a.Annotations = map[string]string{"keystone.openstack.org/orphan-on-delete": "true"}
			})
			By("the registrations annotated, Keystone unreachable for less than the grace: they wait, saying how long")
			annotate := func(obj client.Object) {
				update(client.ObjectKeyFromObject(obj), obj, func(o client.Object) {
					o.SetAnnotations(map[string]string{"keystone.openstack.org/orphan-on-delete": "true"})
				})
			}
			annotate(&keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: key.Name}})
			annotate(&keystonev1.KeystoneApplicationCredential{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: acKey.Name}})
			Eventually(func(g Gomega) {
				c := getAppCred(acKey)(g).Status.Conditions.Get("ApplicationCredentialCleanupReady")
				g.Expect(c.Message).To(ContainSubstring("annotated keystone.openstack.org/orphan-on-delete: application credentials of user glance"))
				g.Expect(c.Message).To(ContainSubstring("stays valid in Keystone if it is still unreachable in "))
			}).Should(Succeed())
			Consistently(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, key, &keystonev1.KeystoneService{})) }, time.Second).Should(BeFalse())
			Expect(orphaned("glance")).To(BeEmpty())

			By("the grace gone by: the endpoint and the credential, whose deletions found Keystone unreachable, go")
			testClock.Advance(6 * time.Minute)
			// The operator's clock is shared by every spec: set back afterwards.
			DeferCleanup(func() { testClock.Advance(-(6 * time.Minute)) })
			Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, key, &keystonev1.KeystoneEndpoint{})) }, 30*time.Second).Should(BeTrue())
			Eventually(func() bool {
				return apierrors.IsNotFound(k8sClient.Get(ctx, acKey, &keystonev1.KeystoneApplicationCredential{}))
			}, 30*time.Second).Should(BeTrue())

			By("the KeystoneService waited for its endpoint until now, False all along: its grace starts at its own first failure")
			Eventually(func(g Gomega) {
				c := getService(key)(g).Status.Conditions.Get("KeystoneServiceReady")
				g.Expect(c.Message).To(ContainSubstring("stays valid in Keystone if it is still unreachable in "))
			}).Should(Succeed())
			Consistently(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, key, &keystonev1.KeystoneService{})) }, time.Second).Should(BeFalse())
			testClock.Advance(6 * time.Minute)
			DeferCleanup(func() { testClock.Advance(-(6 * time.Minute)) })
			Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, key, &keystonev1.KeystoneService{})) }, 30*time.Second).Should(BeTrue())
			Eventually(func() string { return orphaned("glance") }).Should(And(
				ContainSubstring("endpoints internal="), ContainSubstring("service glance (image) "+serviceID+" and user glance"),
				ContainSubstring("left valid in Keystone"),
				ContainSubstring("KeystoneService glance annotated keystone.openstack.org/orphan-on-delete, and Keystone unreachable or refusing since ")))
			Expect(orphaned("ac-glance")).To(ContainSubstring("application credentials of user glance"))
			Expect(getAPI(apiKey)(Default).Finalizers).To(ConsistOf("keystone.openstack.org/keystoneapi"), "no registration holds it")
		})

		It("lets the registrations of a KeystoneAPI being deleted give up after a bounded wait", func() {
			apiKey, acKey := setup()
			Expect(k8sClient.Delete(ctx, getAPI(apiKey)(Default))).To(Succeed())
			Eventually(func(g Gomega) {
				c := getAPI(apiKey)(g).Status.Conditions.Get("InputReady")
				g.Expect(c.Message).To(ContainSubstring("deleting: waiting for"))
			}).Should(Succeed())
			Consistently(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, apiKey, &keystonev1.KeystoneAPI{})) }, time.Second).Should(BeFalse())
			testClock.Advance(11 * time.Minute)
			// The operator's clock is shared by every spec: set back afterwards.
			DeferCleanup(func() { testClock.Advance(-(11 * time.Minute)) })
			Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, apiKey, &keystonev1.KeystoneAPI{})) }, 30*time.Second).Should(BeTrue())
			Expect(orphaned("glance")).To(ContainSubstring("KeystoneAPI keystone has been deleting for more than 10m0s"))
			Expect(orphaned("ac-glance")).NotTo(BeEmpty())
			Expect(k8sClient.Get(ctx, key, &keystonev1.KeystoneService{})).To(Succeed(), "not deleted: only its registration was given up")
			Expect(k8sClient.Get(ctx, acKey, &keystonev1.KeystoneApplicationCredential{})).To(Succeed())
		})
	})

	It("keeps the metric series of a deletion Keystone blocks, so an alert can fire, and drops them once it is gone", func() {
		keystone()
		register()
		series := func() map[string]float64 {
			all, err := testutil.ConditionSeries(metrics.Registry)
			Expect(err).NotTo(HaveOccurred())
			return all
		}
		readyFalse := testutil.SeriesKey("KeystoneService", ns, "glance", "Ready", "False")
		ks.FailEvery(http.MethodDelete, "/v3/services", http.StatusServiceUnavailable)
		Expect(k8sClient.Delete(ctx, getService(key)(Default))).To(Succeed())
		Eventually(series).Should(HaveKeyWithValue(readyFalse, 1.0))
		Consistently(series, 2*time.Second).Should(HaveKeyWithValue(readyFalse, 1.0), "kept while the deletion is blocked")
		deletions := func() map[string]float64 {
			all, err := testutil.DeletionSeries(metrics.Registry)
			Expect(err).NotTo(HaveOccurred())
			return all
		}
		requested := getService(key)(Default).DeletionTimestamp
		Expect(deletions()).To(HaveKeyWithValue("KeystoneService "+ns+"/glance", float64(requested.Unix())),
			"when the blocked deletion was requested: an alert measures how long it waits")
		scrapeSeries() // for the alerts (monitoring_test.go)
		ks.Heal()
		Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, key, &keystonev1.KeystoneService{})) }).Should(BeTrue())
		Eventually(series).ShouldNot(HaveKey(readyFalse), "dropped once it is gone")
		Expect(deletions()).NotTo(HaveKey("KeystoneService " + ns + "/glance"))
	})

	It("removes its registration with the admin's credentials alone when its password Secret goes first", func() {
		keystone()
		createSecret(ns, "glance-secret", map[string]string{"GlancePassword": "glance-1"})
		svc := keystoneService(ns)
		svc.Spec.Secret = "glance-secret"
		Expect(k8sClient.Create(ctx, svc)).To(Succeed())
		expectServiceConditions(key, condition{"Ready", "True", "Ready", ""})
		Expect(k8sClient.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "glance-secret"}})).To(Succeed())
		Expect(k8sClient.Delete(ctx, getService(key)(Default))).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, key, &keystonev1.KeystoneService{})) }).Should(BeTrue())
		Expect(ks.List(fakekeystone.Services, nil)).To(BeEmpty())
		Expect(ks.List(fakekeystone.Users, map[string]any{"name": "glance"})).To(BeEmpty())
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
		// envtest runs no garbage collector: delete what the first owned, as it would, once
		// the first is gone (a round of it still under way could write them again, and an
		// owner that no longer exists is what lets the collector take them).
		Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, first, &keystonev1.KeystoneAPI{})) }).Should(BeTrue())
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

// quiet waits until the fake Keystone has had no request for a second.
func quiet(ks *fakekeystone.Server) {
	GinkgoHelper()
	var last map[string]int
	Eventually(func() bool {
		now := ks.Requests()
		same := last != nil && maps.Equal(now, last)
		last = now
		return same
	}, 30*time.Second, time.Second).Should(BeTrue(), "Keystone requests stopped")
}
