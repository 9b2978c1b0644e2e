package functional

import (
	"context"
	"net/http"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/controllers/keystoneapplicationcredential"
	"github.com/keystone-stepwise/keystone-operator/tests/support/fakekeystone"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	oksecret "github.com/openstack-k8s-operators/lib-common/modules/common/secret"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// applicationCredential returns the KeystoneApplicationCredential of glance's user.
func applicationCredential(ns string) *keystonev1.KeystoneApplicationCredential {
	return &keystonev1.KeystoneApplicationCredential{
		ObjectMeta: metav1.ObjectMeta{Name: "ac-glance", Namespace: ns,
			Annotations: map[string]string{keystonev1.EDPMServiceAnnotation: "false"}},
		Spec: keystonev1.KeystoneApplicationCredentialSpec{Secret: "osp-secret", PasswordSelector: "GlancePassword",
			UserName: "glance", Roles: []string{"service"}},
	}
}

func getAppCred(key types.NamespacedName) func(g Gomega) *keystonev1.KeystoneApplicationCredential {
	return func(g Gomega) *keystonev1.KeystoneApplicationCredential {
		ac := &keystonev1.KeystoneApplicationCredential{}
		g.Expect(k8sClient.Get(context.Background(), key, ac)).To(Succeed())
		return ac
	}
}

// expectAppCredConditions waits until the KeystoneApplicationCredential's conditions include want.
func expectAppCredConditions(key types.NamespacedName, want ...condition) {
	GinkgoHelper()
	expectObservedConditions(key, &keystonev1.KeystoneApplicationCredential{},
		func(ac *keystonev1.KeystoneApplicationCredential) (lc.Conditions, int64) {
			return ac.Status.Conditions, ac.Status.ObservedGeneration
		}, want...)
}

// canUseAppCred tells whether Keystone issues a token for an application credential.
func canUseAppCred(url, id, secret string) bool {
	_, err := openstack.AuthenticatedClient(context.Background(), gophercloud.AuthOptions{
		IdentityEndpoint: url + "/v3/", ApplicationCredentialID: id, ApplicationCredentialSecret: secret,
	})
	return err == nil
}

// acSecret reads a credential's Secret.
func acSecret(ns, name string) *corev1.Secret {
	GinkgoHelper()
	s := &corev1.Secret{}
	Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, s)).To(Succeed())
	return s
}

// setFinalizers plays a consumer (a service operator) adding or removing its finalizer.
func setFinalizers(ns, name string, edit func([]string) []string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		s := &corev1.Secret{}
		g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, s)).To(Succeed())
		s.Finalizers = edit(s.Finalizers)
		g.Expect(k8sClient.Update(ctx, s)).To(Succeed())
	}).Should(Succeed())
}

const consumerFinalizer = "openstack.org/glance-ac-consumer"

func withConsumer(fs []string) []string { return append(fs, consumerFinalizer) }

func withoutConsumer(fs []string) []string {
	var out []string
	for _, f := range fs {
		if f != consumerFinalizer {
			out = append(out, f)
		}
	}
	return out
}

var _ = Describe("KeystoneApplicationCredential", func() {
	var (
		ns  string
		ks  *fakekeystone.Server
		key types.NamespacedName
	)
	// keystone makes an external KeystoneAPI at the fake Keystone, and registers glance
	// (user glance with roles admin and service on the service project).
	keystone := func(withUser bool) {
		api := externalKeystoneAPI(ns)
		api.Spec.Override.Service.Internal.EndpointURL = ptr.To(ks.URL)
		Expect(k8sClient.Create(ctx, api)).To(Succeed())
		createSecret(ns, "osp-secret", map[string]string{"AdminPassword": "secret-admin", "GlancePassword": "glance-1"})
		expectConditions(client.ObjectKeyFromObject(api), condition{"Ready", "True", "Ready", ""})
		if withUser {
			Expect(k8sClient.Create(ctx, keystoneService(ns))).To(Succeed())
			expectServiceConditions(types.NamespacedName{Namespace: ns, Name: "glance"}, condition{"Ready", "True", "Ready", ""})
		}
	}
	ready := func() *keystonev1.KeystoneApplicationCredential {
		GinkgoHelper()
		expectAppCredConditions(key, condition{"Ready", "True", "Ready", ""})
		return getAppCred(key)(Default)
	}
	BeforeEach(func() {
		ns = newNamespace()
		ks = fakekeystone.New("admin", "secret-admin")
		DeferCleanup(ks.Close)
		key = types.NamespacedName{Namespace: ns, Name: "ac-glance"}
	})

	It("walks every step forward and makes a credential the service can use, and a Secret it can read", func() {
		Expect(k8sClient.Create(ctx, applicationCredential(ns))).To(Succeed())
		By("no KeystoneAPI yet")
		expectAppCredConditions(key,
			condition{"Ready", "False", "DependencyNotFound", "Warning"},
			condition{"KeystoneAPIReady", "False", "DependencyNotFound", "Warning"})
		Expect(getAppCred(key)(Default).Status.Conditions.Get("Ready").Message).To(
			Equal("KeystoneAPIReady (0/6 ready): no KeystoneAPI in namespace " + ns))

		By("the KeystoneAPI is ready, the user does not exist yet: a Warning, retried")
		keystone(false)
		expectAppCredConditions(key,
			condition{"InputReady", "True", "Ready", ""},
			condition{"KeystoneApplicationCredentialReady", "False", "UserAuthenticationFailed", "Warning"})
		Expect(getAppCred(key)(Default).Status.Conditions.Get("KeystoneApplicationCredentialReady").Message).To(
			Equal("user glance does not exist in Keystone (yet)"))

		By("the KeystoneService registers the user: the credential is made")
		Expect(k8sClient.Create(ctx, keystoneService(ns))).To(Succeed())
		ac := ready()
		Expect(summary(ac.Status.Conditions)).To(Equal([]condition{
			{"Ready", "True", "Ready", ""},
			{"KeystoneAPIReady", "True", "Ready", ""},
			{"InputReady", "True", "Ready", ""},
			{"KeystoneApplicationCredentialReady", "True", "Ready", ""},
			{"ApplicationCredentialSecretReady", "True", "Ready", ""},
			{"ApplicationCredentialRotationReady", "True", "Ready", ""},
			{"ApplicationCredentialCleanupReady", "True", "Ready", ""},
		}))
		Eventually(func() []string { return eventReasons(ns, "ac-glance") }).Should(ContainElements(
			"ApplicationCredentialCreated", "SecretCreated"), "each creation was reported before it was confirmed")
		st := ac.Status
		Expect(st.ACID).NotTo(BeEmpty())
		Expect(st.PreviousSecretName).To(BeEmpty())
		Expect(st.ExpiresAt.Sub(st.CreatedAt.Time)).To(BeNumerically("~", 365*24*time.Hour, time.Second))
		Expect(st.RotationEligibleAt.Time).To(Equal(st.ExpiresAt.Add(-182 * 24 * time.Hour)))
		Expect(st.SecurityHash).NotTo(BeEmpty())
		Expect(st.LastRotated).To(BeNil())

		secret := acSecret(ns, st.SecretName)
		Expect(secret.Immutable).To(HaveValue(BeTrue()))
		Expect(secret.Finalizers).To(ConsistOf(keystoneapplicationcredential.ProtectionFinalizer))
		Expect(secret.Labels).To(Equal(map[string]string{"application-credentials": "true", "application-credential-service": "glance"}))
		Expect(metav1.IsControlledBy(secret, ac)).To(BeTrue())
		Expect(string(secret.Data["AC_ID"])).To(Equal(st.ACID))
		Expect(canUseAppCred(ks.URL, st.ACID, string(secret.Data["AC_SECRET"]))).To(BeTrue())
		Expect(ks.AppCredIDs("glance")).To(Equal([]string{st.ACID}))
		Expect(kubectl("-n", ns, "get", "appcred", "ac-glance")).To(ContainSubstring(st.SecretName))

		By("converged: no write")
		before := settledWrites(ns)
		for i := 0; i < 3; i++ {
			reconciledAfter("keystoneapplicationcredential", func() {
				update(key, &keystonev1.KeystoneApplicationCredential{}, touchAnnotation)
			})
		}
		Consistently(func() map[string]int64 { return writesIn(ns) }, 2*time.Second).Should(Equal(before))
	})

	It("never logs in as a user of an identity provider: a name only such users have is refused", func() {
		keystone(false)
		ks.CreateFederatedUser("glance", "default")
		Expect(k8sClient.Create(ctx, applicationCredential(ns))).To(Succeed())
		expectAppCredConditions(key, condition{"KeystoneApplicationCredentialReady", "False", "InvalidInput", "Error"})
		Expect(getAppCred(key)(Default).Status.Conditions.Get("KeystoneApplicationCredentialReady").Message).To(Equal(
			"spec.userName: user glance is a user with federated identities (a person's, who logs in through an identity " +
				"provider), which is never taken as a service user; choose another name (nothing is written)"))
		Expect(ks.AppCredIDs("glance")).To(BeEmpty())
	})

	It("rotates at the grace period, keeps the previous credential while a consumer holds its Secret, then revokes it", func() {
		keystone(true)
		Expect(k8sClient.Create(ctx, applicationCredential(ns))).To(Succeed())
		first := ready().Status
		firstSecret := acSecret(ns, first.SecretName)
		setFinalizers(ns, first.SecretName, withConsumer)

		By("184 days later: inside the grace period")
		testClock.Advance(184 * 24 * time.Hour)
		// The operator's clock is shared by every spec: set back afterwards.
		DeferCleanup(func() { testClock.Advance(-(184 * 24 * time.Hour)) })
		update(key, &keystonev1.KeystoneApplicationCredential{}, touchAnnotation)
		Eventually(func(g Gomega) {
			g.Expect(getAppCred(key)(g).Status.ACID).NotTo(Equal(first.ACID))
		}).Should(Succeed())
		second := ready().Status
		Expect(second.PreviousSecretName).To(Equal(first.SecretName))
		Expect(second.LastRotated).NotTo(BeNil())
		expectRelated(appCredRelated(key), secretNamed(ns, second.SecretName), secretNamed(ns, first.SecretName))
		// Events are recorded asynchronously: the Event may follow the status.
		Eventually(func() []string { return eventReasons(ns, "ac-glance") }).Should(ContainElement("ApplicationCredentialRotated"))
		Expect(getAppCred(key)(Default).Status.Conditions.Get("ApplicationCredentialCleanupReady").Message).To(
			ContainSubstring("secret " + first.SecretName + " is used by " + consumerFinalizer))
		Expect(canUseAppCred(ks.URL, first.ACID, string(firstSecret.Data["AC_SECRET"]))).To(BeTrue(), "the old one works while in use")
		Expect(ks.AppCredIDs("glance")).To(ConsistOf(first.ACID, second.ACID))
		expectAppCredConditions(key, condition{"Ready", "True", "Ready", ""}, condition{"PreviousCredentialReleased", "True", "Ready", ""})
		Expect(deadlineGauge("KeystoneApplicationCredential", ns, "ac-glance", "expiresAt")).To(BeEquivalentTo(second.ExpiresAt.Unix()))
		Expect(deadlineGauge("KeystoneApplicationCredential", ns, "ac-glance", "rotationEligibleAt")).To(
			BeEquivalentTo(second.RotationEligibleAt.Unix()))

		By("a day later the consumer still holds it: a Warning naming it, Ready unmoved")
		testClock.Advance(25 * time.Hour)
		DeferCleanup(func() { testClock.Advance(-25 * time.Hour) })
		update(key, &keystonev1.KeystoneApplicationCredential{}, touchAnnotation)
		expectAppCredConditions(key, condition{"Ready", "True", "Ready", ""},
			condition{"PreviousCredentialReleased", "False", "CredentialHeld", "Warning"})
		Expect(getAppCred(key)(Default).Status.Conditions.Get("PreviousCredentialReleased").Message).To(
			ContainSubstring("secret " + first.SecretName + " is used by " + consumerFinalizer))
		Eventually(func() []string { return eventReasons(ns, "ac-glance") }).Should(ContainElement("CredentialHeld"))
		Eventually(func() float64 {
			return gauge("KeystoneApplicationCredential", ns, "ac-glance", "PreviousCredentialReleased", "False")
		}).Should(Equal(1.0))
		scrapeSeries() // for the alerts (monitoring_test.go)

		By("the consumer moves its finalizer to the new Secret")
		setFinalizers(ns, second.SecretName, withConsumer)
		setFinalizers(ns, first.SecretName, withoutConsumer)
		Eventually(func() []string { return ks.AppCredIDs("glance") }).Should(Equal([]string{second.ACID}))
		Expect(canUseAppCred(ks.URL, first.ACID, string(firstSecret.Data["AC_SECRET"]))).To(BeFalse(), "revoked")
		Eventually(gone(types.NamespacedName{Namespace: ns, Name: first.SecretName}, &corev1.Secret{})).Should(BeTrue())
		Eventually(func(g Gomega) { g.Expect(getAppCred(key)(g).Status.PreviousSecretName).To(BeEmpty()) }).Should(Succeed())
		expectAppCredConditions(key, condition{"Ready", "True", "Ready", ""})
		Expect(getAppCred(key)(Default).Status.Conditions.Get("PreviousCredentialReleased")).To(BeNil(), "nothing held: not reported")
		expectRelated(appCredRelated(key), secretNamed(ns, second.SecretName))
	})

	It("rotates at once when the roles change, and revokes the previous one when nobody uses it", func() {
		keystone(true)
		Expect(k8sClient.Create(ctx, applicationCredential(ns))).To(Succeed())
		first := ready().Status
		update(key, &keystonev1.KeystoneApplicationCredential{}, func(ac *keystonev1.KeystoneApplicationCredential) {
			ac.Spec.Roles = []string{"service", "admin"}
		})
		Eventually(func(g Gomega) {
			ac := getAppCred(key)(g)
			g.Expect(ac.Status.ACID).NotTo(Equal(first.ACID))
			g.Expect(ac.Status.SecurityHash).NotTo(Equal(first.SecurityHash))
		}).Should(Succeed())
		second := ready().Status
		Eventually(func() []string { return ks.AppCredIDs("glance") }).Should(Equal([]string{second.ACID}))
		Eventually(gone(types.NamespacedName{Namespace: ns, Name: first.SecretName}, &corev1.Secret{})).Should(BeTrue())
	})

	It("revokes, as its owner's, the credential of the previous user when userName changes", func() {
		keystone(true)
		setSecretKey(ns, "osp-secret", "NovaPassword", "nova-1")
		nova := keystoneService(ns)
		nova.Name, nova.Spec.ServiceName, nova.Spec.ServiceType, nova.Spec.ServiceUser, nova.Spec.PasswordSelector =
			"nova", "nova", "compute", "nova", "NovaPassword"
		Expect(k8sClient.Create(ctx, nova)).To(Succeed())
		expectServiceConditions(client.ObjectKeyFromObject(nova), condition{"Ready", "True", "Ready", ""})
		Expect(k8sClient.Create(ctx, applicationCredential(ns))).To(Succeed())
		first := ready().Status
		Expect(ks.AppCredIDs("glance")).To(Equal([]string{first.ACID}))
		update(key, &keystonev1.KeystoneApplicationCredential{}, func(ac *keystonev1.KeystoneApplicationCredential) {
			ac.Spec.UserName, ac.Spec.PasswordSelector = "nova", "NovaPassword"
		})
		Eventually(func(g Gomega) { g.Expect(getAppCred(key)(g).Status.ACID).NotTo(Equal(first.ACID)) }).Should(Succeed())
		second := ready().Status
		Expect(ks.AppCredIDs("nova")).To(Equal([]string{second.ACID}))
		Eventually(func() []string { return ks.AppCredIDs("glance") }).Should(BeEmpty(), "the previous user's credential is revoked, not left valid")
		Eventually(gone(types.NamespacedName{Namespace: ns, Name: first.SecretName}, &corev1.Secret{})).Should(BeTrue())
	})

	It("follows its user when it is deleted and created again under the same name and password", func() {
		keystone(true)
		Expect(k8sClient.Create(ctx, applicationCredential(ns))).To(Succeed())
		first := ready().Status
		By("the user is deleted in Keystone, and its KeystoneService creates it again")
		users := ks.List(fakekeystone.Users, map[string]any{"name": "glance"})
		Expect(users).To(HaveLen(1))
		ks.Delete(fakekeystone.Users, users[0]["id"].(string))
		update(types.NamespacedName{Namespace: ns, Name: "glance"}, &keystonev1.KeystoneService{}, touchAnnotation)
		Eventually(func() []map[string]any { return ks.List(fakekeystone.Users, map[string]any{"name": "glance"}) }).Should(HaveLen(1))
		expectServiceConditions(types.NamespacedName{Namespace: ns, Name: "glance"}, condition{"Ready", "True", "Ready", ""})
		By("the credential is made again for the new user, not asked of the old ID for ever")
		update(key, &keystonev1.KeystoneApplicationCredential{}, touchAnnotation)
		Eventually(func(g Gomega) { g.Expect(getAppCred(key)(g).Status.ACID).NotTo(Equal(first.ACID)) }).Should(Succeed())
		second := ready().Status
		Expect(ks.AppCredIDs("glance")).To(Equal([]string{second.ACID}))
	})

	DescribeTable("reports what Keystone refuses, with its message, and leaves nothing half-created",
		func(mutate func(*keystonev1.KeystoneApplicationCredential), fault func(*fakekeystone.Server), want condition, message string) {
			keystone(true)
			if fault != nil {
				fault(ks)
			}
			ac := applicationCredential(ns)
			mutate(ac)
			Expect(k8sClient.Create(ctx, ac)).To(Succeed())
			expectAppCredConditions(key, condition{"Ready", "False", want.Reason, want.Severity}, want)
			Expect(getAppCred(key)(Default).Status.Conditions.Get(want.Type).Message).To(ContainSubstring(message))
			Expect(ks.AppCredIDs("glance")).To(BeEmpty())
			secrets := &corev1.SecretList{}
			Expect(k8sClient.List(ctx, secrets, client.InNamespace(ns), client.MatchingLabels{"application-credentials": "true"})).To(Succeed())
			Expect(secrets.Items).To(BeEmpty())
		},
		Entry("a role that does not exist", func(ac *keystonev1.KeystoneApplicationCredential) { ac.Spec.Roles = []string{"nosuchrole"} }, nil,
			condition{"KeystoneApplicationCredentialReady", "False", "ApplicationCredentialFailed", "Error"}, "Role nosuchrole is not defined"),
		Entry("a password that no longer works", func(*keystonev1.KeystoneApplicationCredential) {},
			func(ks *fakekeystone.Server) { ks.SetPassword("glance", "changed-elsewhere") },
			condition{"KeystoneApplicationCredentialReady", "False", "UserAuthenticationFailed", "Warning"},
			"Keystone refused the password of user glance from secret osp-secret"),
		Entry("an access rule Keystone refuses", func(ac *keystonev1.KeystoneApplicationCredential) {
			ac.Spec.AccessRules = []keystonev1.ACRule{{Service: "compute", Path: "/v2.1/servers", Method: "GET"}}
		}, func(ks *fakekeystone.Server) { ks.FailNext(http.MethodPost, "/v3/users", http.StatusBadRequest) },
			condition{"KeystoneApplicationCredentialReady", "False", "ApplicationCredentialFailed", "Error"}, "Bad Request"),
	)

	It("waits, with a Warning, for a role its user does not have yet, and goes on once the KeystoneService assigns it", func() {
		keystone(true)
		allowRoles(ns, "reader")
		ac := applicationCredential(ns)
		ac.Spec.Roles = []string{"reader"}
		ks.Create(fakekeystone.Roles, map[string]any{"name": "reader"})
		Expect(k8sClient.Create(ctx, ac)).To(Succeed())
		expectAppCredConditions(key,
			condition{"Ready", "False", "RoleNotAssigned", "Warning"},
			condition{"KeystoneApplicationCredentialReady", "False", "RoleNotAssigned", "Warning"})
		Expect(getAppCred(key)(Default).Status.Conditions.Get("KeystoneApplicationCredentialReady").Message).To(
			ContainSubstring("user glance needs roles [reader] on project service"))
		Expect(ks.AppCredIDs("glance")).To(BeEmpty())
		updateService(types.NamespacedName{Namespace: ns, Name: "glance"}, func(s *keystonev1.KeystoneService) {
			s.Spec.Roles = []string{"admin", "service", "reader"}
		})
		ready()
	})

	It("revokes a credential a crashed round created but never recorded, and creates no duplicate", func() {
		keystone(true)
		ac := applicationCredential(ns)
		ac.Spec.PasswordSelector = "NotYet"
		Expect(k8sClient.Create(ctx, ac)).To(Succeed())
		expectAppCredConditions(key, condition{"InputReady", "False", "DependencyNotFound", "Warning"})
		uid := getAppCred(key)(Default).UID
		user := ks.List(fakekeystone.Users, map[string]any{"name": "glance"})[0]["id"].(string)
		orphan := ks.Create(fakekeystone.AppCreds, map[string]any{"user_id": user, "name": "ac-glance-crash",
			"description": "Created by keystone-operator [owner KeystoneApplicationCredential/" + ns + "/ac-glance/" + string(uid) + "]"})
		foreign := ks.Create(fakekeystone.AppCreds, map[string]any{"user_id": user, "name": "someone-elses", "description": "not ours"})
		update(key, &keystonev1.KeystoneApplicationCredential{}, func(ac *keystonev1.KeystoneApplicationCredential) {
			ac.Spec.PasswordSelector = "GlancePassword"
		})
		current := ready().Status.ACID
		Expect(ks.AppCredIDs("glance")).To(ConsistOf(current, foreign), "the orphan %s is revoked, the foreign one kept", orphan)
	})

	It("revokes every credential on deletion and respects a consumer's finalizer on a Secret", func() {
		keystone(true)
		Expect(k8sClient.Create(ctx, applicationCredential(ns))).To(Succeed())
		first := ready().Status
		setFinalizers(ns, first.SecretName, withConsumer)
		update(key, &keystonev1.KeystoneApplicationCredential{}, func(ac *keystonev1.KeystoneApplicationCredential) {
			ac.Spec.Roles = []string{"admin"}
		})
		Eventually(func(g Gomega) { g.Expect(getAppCred(key)(g).Status.PreviousSecretName).To(Equal(first.SecretName)) }).Should(Succeed())
		second := ready().Status
		Expect(ks.AppCredIDs("glance")).To(HaveLen(2))

		Expect(k8sClient.Delete(ctx, getAppCred(key)(Default))).To(Succeed())
		Eventually(gone(key, &keystonev1.KeystoneApplicationCredential{})).Should(BeTrue())
		Expect(ks.AppCredIDs("glance")).To(BeEmpty(), "both credentials revoked")
		Expect(acSecret(ns, first.SecretName).Finalizers).To(ConsistOf(consumerFinalizer), "the consumer's finalizer stays")
		Expect(acSecret(ns, second.SecretName).Finalizers).To(BeEmpty())
		api := getAPI(types.NamespacedName{Namespace: ns, Name: "keystone"})(Default)
		Expect(api.Finalizers).NotTo(ContainElement(ContainSubstring("keystoneapplicationcredential")))
	})

	// dataPlaneCredential registers glance and its credential for a data plane service
	// (as by default), and returns its status once Ready.
	dataPlaneCredential := func() keystonev1.KeystoneApplicationCredentialStatus {
		GinkgoHelper()
		keystone(true)
		ac := applicationCredential(ns)
		delete(ac.Annotations, keystonev1.EDPMServiceAnnotation)
		Expect(k8sClient.Create(ctx, ac)).To(Succeed())
		return ready().Status
	}

	It("waits for the data plane, where NodeSets run, before revoking or letting go", func() {
		first := dataPlaneCredential()
		setNodeSetHashes(ns, map[string]string{first.SecretName: "deployed-long-ago"})

		By("a rotation: the previous credential waits until the NodeSet deployed the current Secrets")
		update(key, &keystonev1.KeystoneApplicationCredential{}, func(ac *keystonev1.KeystoneApplicationCredential) {
			ac.Spec.Roles = []string{"admin"}
		})
		Eventually(func(g Gomega) { g.Expect(getAppCred(key)(g).Status.ACID).NotTo(Equal(first.ACID)) }).Should(Succeed())
		second := ready().Status
		Expect(getAppCred(key)(Default).Status.Conditions.Get("ApplicationCredentialCleanupReady").Message).To(
			ContainSubstring("waiting for the data plane: NodeSet compute has not deployed secret " + first.SecretName))
		Consistently(func() []string { return ks.AppCredIDs("glance") }, time.Second).Should(ConsistOf(first.ACID, second.ACID))

		By("the NodeSet deploys the current Secret")
		setNodeSetHashes(ns, map[string]string{second.SecretName: secretHash(acSecret(ns, second.SecretName))})
		Eventually(func() []string { return ks.AppCredIDs("glance") }).Should(Equal([]string{second.ACID}))

		By("deletion waits too")
		setNodeSetHashes(ns, map[string]string{second.SecretName: "deployed-long-ago"})
		Expect(k8sClient.Delete(ctx, getAppCred(key)(Default))).To(Succeed())
		Eventually(func(g Gomega) {
			c := getAppCred(key)(g).Status.Conditions.Get("ApplicationCredentialCleanupReady")
			g.Expect(c.Message).To(HavePrefix("deleting: waiting for the data plane"))
		}).Should(Succeed())
		Expect(ks.AppCredIDs("glance")).To(Equal([]string{second.ACID}))
		By("deployed, but a Secret the NodeSet deployed no longer exists: its nodes still run what it held, as keystone-operator judges")
		setNodeSetHashes(ns, map[string]string{second.SecretName: secretHash(acSecret(ns, second.SecretName)),
			"nova-compute-config-deleted": "deployed-before-its-secret-went"})
		Eventually(func(g Gomega) {
			c := getAppCred(key)(g).Status.Conditions.Get("ApplicationCredentialCleanupReady")
			g.Expect(c.Message).To(ContainSubstring("NodeSet compute deployed secret nova-compute-config-deleted, which no longer exists"))
		}).Should(Succeed())
		Consistently(func() []string { return ks.AppCredIDs("glance") }, time.Second).Should(Equal([]string{second.ACID}))

		By("the NodeSet being deleted: its nodes still run what it deployed, so the deletion waits until it is gone")
		deleteNodeSet(ns)
		Consistently(func() []string { return ks.AppCredIDs("glance") }, time.Second).Should(Equal([]string{second.ACID}))
		releaseNodeSet(ns)
		Eventually(gone(key, &keystonev1.KeystoneApplicationCredential{})).Should(BeTrue())
		Expect(ks.AppCredIDs("glance")).To(BeEmpty())
	})

	It("holds no KeystoneAPI being deleted while the data plane lags: revoked at once in external mode, and released", func() {
		current := dataPlaneCredential()
		By("a NodeSet that has not deployed an unrelated Secret: the deletion waits for the data plane")
		createSecret(ns, "nova-compute-config", map[string]string{"nova.conf": "[DEFAULT]"})
		setNodeSetHashes(ns, map[string]string{current.SecretName: secretHash(acSecret(ns, current.SecretName)),
			"nova-compute-config": "deployed-long-ago"})
		Expect(k8sClient.Delete(ctx, getAppCred(key)(Default))).To(Succeed())
		Eventually(func(g Gomega) {
			c := getAppCred(key)(g).Status.Conditions.Get("ApplicationCredentialCleanupReady")
			g.Expect(c.Message).To(HavePrefix("deleting: waiting for the data plane"))
		}).Should(Succeed())

		By("the KeystoneAPI deleted: its Keystone stays (external), so the credential is revoked now, and the KeystoneAPI let go")
		apiKey := types.NamespacedName{Namespace: ns, Name: "keystone"}
		Expect(k8sClient.Delete(ctx, getAPI(apiKey)(Default))).To(Succeed())
		Eventually(gone(apiKey, &keystonev1.KeystoneAPI{})).Should(BeTrue(), "no hold left on it")
		Eventually(gone(key, &keystonev1.KeystoneApplicationCredential{})).Should(BeTrue())
		Expect(ks.AppCredIDs("glance")).To(BeEmpty(), "revoked, not left valid")
	})
})

// computeNodeSet is an empty NodeSet object and the key of the NodeSet compute of ns.
func computeNodeSet(ns string) (*unstructured.Unstructured, types.NamespacedName) {
	nodeSet := &unstructured.Unstructured{}
	nodeSet.SetGroupVersionKind(schema.GroupVersionKind{Group: "dataplane.openstack.org", Version: "v1beta1", Kind: "OpenStackDataPlaneNodeSet"})
	return nodeSet, types.NamespacedName{Namespace: ns, Name: "compute"}
}

// deleteNodeSet deletes the NodeSet compute and keeps it being deleted (a finalizer, as
// the data plane's operator holds one) until releaseNodeSet, or the spec's end.
func deleteNodeSet(ns string) {
	GinkgoHelper()
	nodeSet, key := computeNodeSet(ns)
	const hold = "test.keystone.openstack.org/hold"
	Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, key, nodeSet)).To(Succeed())
		nodeSet.SetFinalizers([]string{hold})
		g.Expect(k8sClient.Update(ctx, nodeSet)).To(Succeed())
	}).Should(Succeed())
	Expect(k8sClient.Delete(ctx, nodeSet)).To(Succeed())
	DeferCleanup(func() { releaseNodeSet(ns) })
}

// releaseNodeSet removes deleteNodeSet's finalizer: the NodeSet compute goes.
func releaseNodeSet(ns string) {
	GinkgoHelper()
	nodeSet, key := computeNodeSet(ns)
	Eventually(func(g Gomega) {
		if err := k8sClient.Get(ctx, key, nodeSet); apierrors.IsNotFound(err) {
			return
		}
		nodeSet.SetFinalizers(nil)
		g.Expect(k8sClient.Update(ctx, nodeSet)).To(Succeed())
	}).Should(Succeed())
}

// setNodeSetHashes plays the data plane: the NodeSet compute deployed the Secrets of
// hashes (created when missing).
func setNodeSetHashes(ns string, hashes map[string]string) {
	GinkgoHelper()
	nodeSet, key := computeNodeSet(ns)
	if err := k8sClient.Get(ctx, key, nodeSet); apierrors.IsNotFound(err) {
		nodeSet.SetNamespace(ns)
		nodeSet.SetName("compute")
		Expect(k8sClient.Create(ctx, nodeSet)).To(Succeed())
	}
	Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, key, nodeSet)).To(Succeed())
		values := map[string]any{}
		for k, v := range hashes {
			values[k] = v
		}
		g.Expect(unstructured.SetNestedMap(nodeSet.Object, values, "status", "secretHashes")).To(Succeed())
		g.Expect(k8sClient.Status().Update(ctx, nodeSet)).To(Succeed())
	}).Should(Succeed())
}

// secretHash is the hash a NodeSet records for a Secret it deployed (lib-common's).
func secretHash(s *corev1.Secret) string {
	GinkgoHelper()
	h, err := oksecret.Hash(s)
	Expect(err).NotTo(HaveOccurred())
	return h
}
