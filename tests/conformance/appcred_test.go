package conformance

import (
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	keystonev1 "github.com/openstack-k8s-operators/keystone-operator/api/v1beta1"
	"github.com/openstack-k8s-operators/lib-common/modules/common/service"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// acConsumerFinalizer is the finalizer placement-operator holds on the application
// credential Secret it uses.
const acConsumerFinalizer = "openstack.org/placement-ac-consumer"

// acSecret reads a Secret named by a KeystoneApplicationCredential's status.
func acSecret(ns, name string) *corev1.Secret {
	GinkgoHelper()
	s := &corev1.Secret{}
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s)).To(Succeed())
	return s
}

// authenticatesWith tells whether the real Keystone issues a token for an application
// credential's Secret: the check an independent client makes.
func authenticatesWith(secret *corev1.Secret) bool {
	_, err := openstack.AuthenticatedClient(ctx, gophercloud.AuthOptions{
		IdentityEndpoint:            keystone + "/v3/",
		ApplicationCredentialID:     string(secret.Data[keystonev1.ACIDSecretKey]),
		ApplicationCredentialSecret: string(secret.Data[keystonev1.ACSecretSecretKey]),
	})
	return err == nil
}

var _ = Describe("A service using its application credential, as the service operators do", func() {
	It("reads AC_ID and AC_SECRET from status.secretName, holds the Secret, and moves to a rotated one", func() {
		ns := newNamespace()
		Expect(k8sClient.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "osp-secret", Namespace: ns},
			StringData: map[string]string{"AdminPassword": adminPassword, "PlacementPassword": "placement-pw"}})).To(Succeed())
		api := &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Namespace: ns}}
		api.Spec.ContainerImage, api.Spec.APITimeout = "unused", 60
		api.Spec.DatabaseInstance, api.Spec.MemcachedInstance, api.Spec.Secret = "openstack", "memcached", "osp-secret"
		api.Spec.PasswordSelectors.Admin, api.Spec.Region = "AdminPassword", "regionOne"
		api.Spec.AdminUser, api.Spec.AdminProject, api.Spec.ExternalKeystoneAPI = "admin", "admin", true
		api.Spec.Override.Service = map[service.Endpoint]service.RoutedOverrideSpec{
			service.EndpointPublic: {EndpointURL: ptr.To(keystone)}, service.EndpointInternal: {EndpointURL: ptr.To(keystone)}}
		Expect(k8sClient.Create(ctx, api)).To(Succeed())
		placement := newConsumer(ns, "placement")
		ksSvc := placement.registerService(keystonev1.KeystoneServiceSpec{ServiceType: "placement", ServiceName: "placement",
			Enabled: true, ServiceUser: "placement", Secret: "osp-secret", PasswordSelector: "PlacementPassword"})

		By("openstack-operator creates ac-placement")
		ac := &keystonev1.KeystoneApplicationCredential{ObjectMeta: metav1.ObjectMeta{Name: keystonev1.GetACCRName("placement"),
			Namespace: ns, Annotations: map[string]string{"keystone.openstack.org/edpm-service": "false"}},
			Spec: keystonev1.KeystoneApplicationCredentialSpec{Secret: "osp-secret", PasswordSelector: "PlacementPassword",
				UserName: "placement", ExpirationDays: 365, GracePeriodDays: 182, Roles: []string{"service"}}}
		Expect(k8sClient.Create(ctx, ac)).To(Succeed())
		readySecret := func(g Gomega) string {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(ac), ac)).To(Succeed())
			g.Expect(ac.IsReady()).To(BeTrue())
			g.Expect(ac.Status.SecretName).NotTo(BeEmpty())
			return ac.Status.SecretName
		}
		var firstName string
		Eventually(func(g Gomega) { firstName = readySecret(g) }).Should(Succeed())

		By("placement holds the Secret it uses, and authenticates with it")
		// keystone-operator's helper, as placement-operator calls it since 719e4af.
		Expect(keystonev1.ManageACSecretFinalizer(ctx, placement.h, ns, firstName, "", acConsumerFinalizer)).To(Succeed())
		first := acSecret(ns, firstName)
		Expect(first.Finalizers).To(ContainElement(acConsumerFinalizer))
		Expect(authenticatesWith(first)).To(BeTrue())

		By("a roles change rotates: the old credential keeps working while placement holds its Secret")
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(ac), ac)).To(Succeed())
			ac.Spec.Roles = []string{"service", "admin"}
			g.Expect(k8sClient.Update(ctx, ac)).To(Succeed())
		}).Should(Succeed())
		var secondName string
		Eventually(func(g Gomega) {
			secondName = readySecret(g)
			g.Expect(secondName).NotTo(Equal(firstName))
		}).Should(Succeed())
		second := acSecret(ns, secondName)
		Expect(authenticatesWith(second)).To(BeTrue())
		Consistently(func() bool { return authenticatesWith(first) }, 2*time.Second, 500*time.Millisecond).Should(BeTrue())

		By("placement moves its finalizer: the old credential is revoked, its Secret deleted")
		Expect(keystonev1.ManageACSecretFinalizer(ctx, placement.h, ns, secondName, firstName, acConsumerFinalizer)).To(Succeed())
		Eventually(func() bool { return authenticatesWith(first) }, timeout).Should(BeFalse())
		Eventually(gone(first)).Should(BeTrue())
		Expect(authenticatesWith(second)).To(BeTrue())

		By("placement goes away: it lets go of the Secret, the credential is deleted and revoked")
		Expect(keystonev1.RemoveACSecretConsumerFinalizer(ctx, placement.h, ns, secondName, acConsumerFinalizer)).To(Succeed())
		Expect(k8sClient.Delete(ctx, ac)).To(Succeed())
		Eventually(gone(ac)).Should(BeTrue())
		Expect(authenticatesWith(second)).To(BeFalse())
		placement.release(ksSvc)
	})
})
