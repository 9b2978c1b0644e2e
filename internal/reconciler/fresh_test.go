package reconciler

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

func TestVersionsRepeats(t *testing.T) {
	obj := func(rv string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{UID: "u1", ResourceVersion: rv}}
	}
	patch := []byte(`{"status":{"observedGeneration":2}}`)
	tests := []struct {
		name   string
		sent   bool
		base   string
		data   []byte
		repeat bool
	}{
		{"nothing sent yet", false, "10", patch, false},
		{"the same patch on the object as our write left it", true, "10", patch, true},
		{"the object changed since (someone wrote)", true, "11", patch, false},
		{"another patch", true, "10", []byte(`{"status":{"observedGeneration":3}}`), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			v := NewVersions()
			if tt.sent {
				v.RecordPatch(obj("10"), patch)
			}
			g.Expect(v.Repeats(obj(tt.base), tt.data)).To(Equal(tt.repeat))
		})
	}
	g := NewWithT(t)
	v := NewVersions()
	v.RecordPatch(obj("10"), patch)
	v.Forget(obj("10"))
	g.Expect(v.Repeats(obj("10"), patch)).To(BeFalse(), "forgotten with the object")
}
