package functional

import (
	"context"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/applicationcredentials"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/roles"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/users"
	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// personalCredential makes, in the real Keystone at url, a user that is nobody's
// registration (a person's) and an application credential of theirs; it returns the
// credential's ID and secret.
func personalCredential(url, name string) (string, string) {
	GinkgoHelper()
	bg := context.Background()
	admin := adminClient(url)
	pages, err := projects.List(admin, projects.ListOpts{Name: "admin"}).AllPages(bg)
	Expect(err).NotTo(HaveOccurred())
	found, err := projects.ExtractProjects(pages)
	Expect(err).NotTo(HaveOccurred())
	Expect(found).To(HaveLen(1))
	user, err := users.Create(bg, admin, users.CreateOpts{Name: name, DomainID: "default", Password: "person-pw",
		DefaultProjectID: found[0].ID}).Extract()
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { _ = users.Delete(bg, adminClient(url), user.ID).ExtractErr() })
	rolePages, err := roles.List(admin, roles.ListOpts{Name: "reader"}).AllPages(bg)
	Expect(err).NotTo(HaveOccurred())
	reader, err := roles.ExtractRoles(rolePages)
	Expect(err).NotTo(HaveOccurred())
	Expect(reader).To(HaveLen(1))
	Expect(roles.Assign(bg, admin, reader[0].ID, roles.AssignOpts{UserID: user.ID, ProjectID: found[0].ID}).ExtractErr()).To(Succeed())
	provider, err := openstack.AuthenticatedClient(bg, gophercloud.AuthOptions{IdentityEndpoint: url + "/v3/", Username: name,
		Password: "person-pw", DomainName: "Default", Scope: &gophercloud.AuthScope{ProjectID: found[0].ID}})
	Expect(err).NotTo(HaveOccurred())
	own := &gophercloud.ServiceClient{ProviderClient: provider, Endpoint: url + "/v3/", Type: "identity"}
	cred, err := applicationcredentials.Create(bg, own, user.ID, applicationcredentials.CreateOpts{Name: name + "-laptop"}).Extract()
	Expect(err).NotTo(HaveOccurred())
	Expect(canUseAppCred(url, cred.ID, cred.Secret)).To(BeTrue())
	return cred.ID, cred.Secret
}

// forgedSecret is what a namespace user may write: a Secret with the labels of ac's
// credential Secrets, its controller owner reference, and another's AC_ID.
func forgedSecret(ac *keystonev1.KeystoneApplicationCredential, name, acID string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ac.Namespace, Name: name,
			Labels:          map[string]string{keystonev1.ACSecretLabel: "true", keystonev1.ACServiceLabel: keystonev1.GetServiceNameFromACCR(ac.Name)},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ac, keystonev1.GroupVersion.WithKind("KeystoneApplicationCredential"))}},
		StringData: map[string]string{keystonev1.ACIDSecretKey: acID, keystonev1.ACSecretSecretKey: "forged"},
	}
}

var _ = Describe("What a namespace user writes, against the real Keystone", Label("real-keystone"), func() {
	It("a forged credential Secret makes the admin revoke nobody's credential, in clean-up or at deletion", func() {
		stack := realKeystone()
		url := stack.Keystone.URL()
		ns := newNamespace()
		svc := realCredentialUser(ns, url)
		ac := applicationCredential(ns)
		ac.Spec.UserName, ac.Spec.PasswordSelector = svc.Spec.ServiceUser, "ServicePassword"
		Expect(k8sClient.Create(ctx, ac)).To(Succeed())
		key := client.ObjectKeyFromObject(ac)
		expectAppCredConditions(key, condition{"Ready", "True", "Ready", ""})
		Expect(k8sClient.Get(ctx, key, ac)).To(Succeed())
		victimID, victimSecret := personalCredential(url, ns+"-person")

		By("a Secret naming a person's credential, as this object's earlier one: the clean-up revokes nothing")
		Expect(k8sClient.Create(ctx, forgedSecret(ac, "ac-glance-forged-secret", victimID))).To(Succeed())
		Eventually(gone(types.NamespacedName{Namespace: ns, Name: "ac-glance-forged-secret"}, &corev1.Secret{})).Should(BeTrue(),
			"the forged Secret is taken for what it says, an earlier one, and goes")
		Eventually(func() []string { return eventReasons(ns, ac.Name) }).Should(ContainElement("CredentialNotRevoked"))
		Consistently(func() bool { return canUseAppCred(url, victimID, victimSecret) }, 2*time.Second).Should(BeTrue(),
			"the person's credential still authenticates")

		By("another at the deletion: the object's own credential is revoked, the person's is not")
		current := acSecret(ns, getAppCred(key)(Default).Status.SecretName)
		Expect(k8sClient.Create(ctx, forgedSecret(ac, "ac-glance-forged2-secret", victimID))).To(Succeed())
		Expect(k8sClient.Delete(ctx, getAppCred(key)(Default))).To(Succeed())
		Eventually(gone(key, &keystonev1.KeystoneApplicationCredential{})).Should(BeTrue())
		Eventually(func() bool {
			return canUseAppCred(url, string(current.Data["AC_ID"]), string(current.Data["AC_SECRET"]))
		}, 20*time.Second).Should(BeFalse(), "its own credential revoked")
		Expect(canUseAppCred(url, victimID, victimSecret)).To(BeTrue(), "the person's credential still authenticates")
	})
})

var _ = Describe("A KeystoneApplicationCredential removed with its finalizer stripped", func() {
	It("has its Secrets' protection released, with an Event saying the credential stays valid", func() {
		ns := newNamespace()
		ks := readyAtFakeKeystone(ns, map[string]string{"GlancePassword": "glance-1"})
		Expect(k8sClient.Create(ctx, keystoneService(ns))).To(Succeed())
		expectServiceConditions(types.NamespacedName{Namespace: ns, Name: "glance"}, condition{"Ready", "True", "Ready", ""})
		Expect(k8sClient.Create(ctx, applicationCredential(ns))).To(Succeed())
		key := types.NamespacedName{Namespace: ns, Name: "ac-glance"}
		expectAppCredConditions(key, condition{"Ready", "True", "Ready", ""})
		secretKey := types.NamespacedName{Namespace: ns, Name: getAppCred(key)(Default).Status.SecretName}
		Expect(acSecret(ns, secretKey.Name).Finalizers).To(ContainElement("keystone.openstack.org/ac-secret-protection"))
		setFinalizers(ns, secretKey.Name, withConsumer)

		By("deleted while Keystone is gone, its finalizers stripped by hand: its deletion never finishes")
		ks.Close()
		Expect(k8sClient.Delete(ctx, getAppCred(key)(Default))).To(Succeed())
		Eventually(func(g Gomega) {
			c := getAppCred(key)(g).Status.Conditions.Get("ApplicationCredentialCleanupReady")
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Message).To(ContainSubstring("application credentials of user glance"), "the deletion waits for Keystone")
		}).Should(Succeed())
		update(key, &keystonev1.KeystoneApplicationCredential{}, func(ac *keystonev1.KeystoneApplicationCredential) { ac.Finalizers = nil })
		Eventually(gone(key, &keystonev1.KeystoneApplicationCredential{})).Should(BeTrue())
		Eventually(func(g Gomega) {
			s := &corev1.Secret{}
			g.Expect(k8sClient.Get(ctx, secretKey, s)).To(Succeed())
			g.Expect(s.Finalizers).To(Equal([]string{consumerFinalizer}), "this operator's protection released, the consumer's kept")
		}).Should(Succeed())
		Eventually(func() []string { return eventReasons(ns, secretKey.Name) }).Should(ContainElement("ProtectionReleased"))
	})
})
