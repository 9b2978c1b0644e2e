package condition

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestVersions(t *testing.T) {
	g := NewWithT(t)
	obj := func(rv string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{UID: "u1", ResourceVersion: rv}}
	}
	v := NewVersions()
	g.Expect(v.Stale(obj("5"))).To(BeFalse(), "nothing written yet")
	v.Record(obj("10"))
	g.Expect(v.Stale(obj("9"))).To(BeTrue(), "the cache is behind our write")
	g.Expect(v.Stale(obj("10"))).To(BeFalse())
	g.Expect(v.Stale(obj("11"))).To(BeFalse(), "someone wrote after us")
	v.Record(obj("7"))
	g.Expect(v.Stale(obj("9"))).To(BeTrue(), "an older record does not move the mark back")
	v.Forget(obj("10"))
	g.Expect(v.Stale(obj("9"))).To(BeFalse())
	var none *Versions
	g.Expect(none.Stale(obj("1"))).To(BeFalse())
}
