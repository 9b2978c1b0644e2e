package functional

import (
	"os"
	"path/filepath"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/tests/support/upstream"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
)

var _ = Describe("keystone-operator's own sample", func() {
	It("applies without containerImage and deploys: the operator sets its default, as keystone-operator's webhook does", func() {
		ns := newNamespace()
		sample := filepath.Join(GinkgoT().TempDir(), "keystone_v1beta1_keystoneapi.yaml")
		Expect(os.WriteFile(sample, []byte(upstream.SampleKeystoneAPI(ns)), 0o600)).To(Succeed())
		kubectl("apply", "-f", sample)
		key := types.NamespacedName{Namespace: ns, Name: "keystone"}
		Eventually(func(g Gomega) {
			g.Expect(getAPI(key)(g).Spec.ContainerImage).To(Equal(keystonev1.KeystoneAPIContainerImage))
		}).Should(Succeed())
		Expect(kubectl("get", "keystoneapi", "keystone", "-n", ns, "-o", "jsonpath={.spec.containerImage}")).To(
			Equal(keystonev1.KeystoneAPIContainerImage), "what a user sees")
		Eventually(func() []string { return eventReasons(ns, "keystone") }).Should(ContainElement("Defaulted"))

		createSecret(ns, "osp-secret", map[string]string{"AdminPassword": "secret-admin"})
		createMemcached(ns, "memcached")
		markMemcachedReady(ns, "memcached")
		markDatabaseReady(ns, galera)
		playNotifications(key)
		finishRollout(key, 1)
		dep := &appsv1.Deployment{}
		Expect(k8sClient.Get(ctx, key, dep)).To(Succeed())
		Expect(dep.Spec.Template.Spec.Containers[0].Image).To(Equal(keystonev1.KeystoneAPIContainerImage))

		By("applied again, unchanged: the default stays")
		generation := getAPI(key)(Default).Generation
		kubectl("apply", "-f", sample)
		Consistently(func(g Gomega) {
			a := getAPI(key)(g)
			g.Expect(a.Spec.ContainerImage).To(Equal(keystonev1.KeystoneAPIContainerImage))
			g.Expect(a.Generation).To(Equal(generation))
		}, time.Second).Should(Succeed())
	})
})
