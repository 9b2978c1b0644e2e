package functional

import (
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/tests/support/testutil"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	memcachedv1 "github.com/openstack-k8s-operators/infra-operator/apis/memcached/v1beta1"
	"github.com/openstack-k8s-operators/lib-common/modules/common/tls"
	mariadbv1 "github.com/openstack-k8s-operators/mariadb-operator/api/v1beta1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// TLS to the database and to memcached, as keystone-operator configures it when the
// Galera and the Memcached serve TLS (openstack-operator turns both on by default).
var _ = Describe("KeystoneAPI with a database and a Memcached that serve TLS", func() {
	It("verifies the database against the CA bundle and gives Keystone memcached's client certificate", func() {
		ns := newNamespace()
		ca, err := testutil.NewCA("rootca-internal")
		Expect(err).NotTo(HaveOccurred())
		createSecret(ns, "combined-ca-bundle", map[string]string{"tls-ca-bundle.pem": string(ca.PEM)})
		key := deployReady(ns, func(a *keystonev1.KeystoneAPI) { a.Spec.TLS.CaBundleSecretName = "combined-ca-bundle" })
		config := func(g Gomega, file string) string {
			s := &corev1.Secret{}
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keystone-config-data"}, s)).To(Succeed())
			return string(s.Data[file])
		}
		Expect(config(Default, "my.cnf")).To(ContainSubstring("ssl = false"))
		Expect(config(Default, "keystone.conf")).NotTo(ContainSubstring("tls_enabled"))

		By("mariadb-operator reports TLS, infra-operator TLS with client certificates")
		Eventually(func(g Gomega) {
			db := &mariadbv1.MariaDBDatabase{}
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keystone"}, db)).To(Succeed())
			db.Status.TLSSupport = true
			g.Expect(k8sClient.Status().Update(ctx, db)).To(Succeed())
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			mc := &memcachedv1.Memcached{}
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "memcached"}, mc)).To(Succeed())
			mc.Spec.TLS.MTLS = memcachedv1.MTLSSection{SslVerifyMode: "Require",
				AuthCertSecret: tls.GenericService{SecretName: ptr.To("cert-memcached-mtls")}}
			g.Expect(k8sClient.Update(ctx, mc)).To(Succeed())
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			mc := &memcachedv1.Memcached{}
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "memcached"}, mc)).To(Succeed())
			mc.Status.TLSSupport = true
			g.Expect(k8sClient.Status().Update(ctx, mc)).To(Succeed())
		}).Should(Succeed())

		By("the client certificate's Secret is waited for, then taken")
		expectConditions(key, condition{"MemcachedReady", "False", "DependencyNotFound", "Warning"})
		Expect(message(key, "MemcachedReady")).To(Equal("Memcached memcached asks for client certificates: secret cert-memcached-mtls not found"))
		createSecret(ns, "cert-memcached-mtls", map[string]string{"tls.crt": "cert-1", "tls.key": "key-1", "ca.crt": "ca"})
		Eventually(func(g Gomega) {
			g.Expect(config(g, "my.cnf")).To(ContainSubstring("ssl = 1\nssl-ca = /etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem\n"))
			g.Expect(config(g, "keystone.conf")).To(ContainSubstring("tls_enabled = true\n" +
				"tls_certfile = /etc/pki/tls/certs/mtls.crt\ntls_keyfile = /etc/pki/tls/private/mtls.key\ntls_cafile = /etc/pki/tls/certs/mtls-ca.crt\n"))
		}).Should(Succeed())
		finishJob(ns, "keystone-db-sync", true, "")
		Eventually(func(g Gomega) {
			dep := &appsv1.Deployment{}
			g.Expect(k8sClient.Get(ctx, key, dep)).To(Succeed())
			pod := dep.Spec.Template.Spec
			g.Expect(pod.Volumes).To(ContainElement(And(HaveField("Name", "memcached-mtls"),
				HaveField("VolumeSource.Secret.SecretName", "cert-memcached-mtls"))))
			g.Expect(pod.Containers[0].VolumeMounts).To(ContainElement(And(HaveField("MountPath", "/etc/pki/tls/private/mtls.key"),
				HaveField("SubPath", "tls.key"))))
		}).Should(Succeed())
		rollOut(ns, key.Name, 1)
		expectConditions(key, condition{"Ready", "True", "Ready", ""})

		By("a renewed client certificate rolls the pods: they mount it file by file, which a renewal never updates")
		revision := func(g Gomega) string {
			dep := &appsv1.Deployment{}
			g.Expect(k8sClient.Get(ctx, key, dep)).To(Succeed())
			return dep.Spec.Template.Annotations[deploy.HashAnnotation]
		}
		before := revision(Default)
		By("a label added to it (cert-manager, a person) rolls nothing")
		Eventually(func(g Gomega) {
			secret := &corev1.Secret{}
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "cert-memcached-mtls"}, secret)).To(Succeed())
			secret.Labels = map[string]string{"example.com/reviewed": "yes"}
			g.Expect(k8sClient.Update(ctx, secret)).To(Succeed())
		}).Should(Succeed())
		touch(key)
		Consistently(revision, 2*time.Second).Should(Equal(before))
		setSecretKey(ns, "cert-memcached-mtls", "tls.crt", "cert-2")
		Eventually(revision).ShouldNot(Equal(before))
	})
})
