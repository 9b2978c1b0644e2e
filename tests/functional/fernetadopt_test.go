package functional

import (
	"encoding/base64"

	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/tests/support/upstream"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// A pre-created key Secret is adopted without losing a key: a repository with gaps is
// renumbered in order (the primary stays the highest), and one with keys that are no
// keys is refused and left as it is.
var _ = Describe("Adopting a keystone Secret that is not laid out as this operator writes it", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })
	keysSecret := func(g Gomega) *corev1.Secret {
		s := &corev1.Secret{}
		g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keystone"}, s)).To(Succeed())
		return s
	}

	It("keeps every key of a repository with gaps, the primary still the primary, and says which moved", func() {
		data := upstream.KeysData(5)
		// FernetKeys0, 1, 3 and 4: the primary is 4, as Keystone reads the repository.
		primary, secondary := data["FernetKeys4"], data["FernetKeys3"]
		delete(data, "FernetKeys2")
		Expect(k8sClient.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Namespace: ns}, Data: data})).To(Succeed())
		key := deployReady(ns)
		Eventually(func(g Gomega) {
			keys := deploy.FernetKeys(keysSecret(g).Data)
			g.Expect(keys).To(HaveLen(5), "padded to fernetMaxActiveKeys with a new secondary key")
			g.Expect(keys[0]).To(Equal(string(data["FernetKeys0"])), "the staged key")
			g.Expect(keys[4]).To(Equal(string(primary)), "the primary is still the highest")
			g.Expect(keys[3]).To(Equal(string(secondary)))
			g.Expect(keys).To(ContainElement(string(data["FernetKeys1"])))
		}).Should(Succeed())
		Eventually(func() []string { return eventReasons(ns, key.Name) }).Should(ContainElement("FernetKeysRenumbered"))
	})

	It("refuses keys that are no keys, naming them, and rewrites nothing", func() {
		data := upstream.KeysData(5)
		// A key of white space only, and one of 31 bytes: Keystone's Fernet refuses both.
		data["FernetKeys1"], data["FernetKeys2"] = []byte("\n"), []byte(base64.StdEncoding.EncodeToString(make([]byte, 31)))
		Expect(k8sClient.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Namespace: ns}, Data: data})).To(Succeed())
		before := keysSecret(Default).ResourceVersion
		key := createWithInputs(keystoneAPI(ns))
		expectConditions(key, condition{"FernetKeysReady", "False", "InvalidInput", "Error"})
		Expect(message(key, "FernetKeysReady")).To(Equal("secret keystone cannot be used as it is, and nothing in it was " +
			"rewritten: FernetKeys1 holds no base64 character; FernetKeys2 decodes to 31 bytes, not the 32 of a Fernet key"))
		Expect(keysSecret(Default).ResourceVersion).To(Equal(before), "not rewritten")
	})
})
