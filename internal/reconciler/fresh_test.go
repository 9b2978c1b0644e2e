package reconciler

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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

// TestVersionsRefresh: a cache older than the last status write hands over what that
// write left (without managedFields, as the cache keeps objects); a cache that caught
// up, or a write never recorded, leaves the object as the cache handed it, and the
// copy goes once the cache has caught up.
func TestVersionsRefresh(t *testing.T) {
	g := NewWithT(t)
	obj := func(rv, data string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{UID: "u1", ResourceVersion: rv,
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}}, Data: map[string]string{"k": data}}
	}
	v := NewVersions()
	cached := obj("9", "old")
	g.Expect(v.Refresh(cached)).To(BeFalse(), "nothing written yet")
	written := obj("10", "written")
	v.Record(written)
	written.Data["k"] = "changed after the write"
	g.Expect(v.Refresh(cached)).To(BeTrue(), "the cache is behind our write")
	g.Expect(cached.ResourceVersion).To(Equal("10"))
	g.Expect(cached.Data).To(Equal(map[string]string{"k": "written"}), "a copy of what the write left")
	g.Expect(cached.ManagedFields).To(BeNil())
	cached.Data["k"] = "the round's own change"
	again := obj("9", "old")
	g.Expect(v.Refresh(again)).To(BeTrue())
	g.Expect(again.Data["k"]).To(Equal("written"), "each round gets its own copy")

	g.Expect(v.Refresh(obj("10", "cache"))).To(BeFalse(), "the cache caught up")
	g.Expect(v.objects).To(BeEmpty(), "the copy dropped once the cache caught up")
	g.Expect(v.Stale(obj("9", "old"))).To(BeTrue())
	g.Expect(v.Refresh(obj("9", "old"))).To(BeFalse(), "without the copy, the API server is read (Stale)")

	v.Record(obj("12", "x"))
	v.Forget(obj("12", "x"))
	g.Expect(v.objects).To(BeEmpty(), "forgotten with the object")
	var none *Versions
	g.Expect(none.Refresh(obj("1", "x"))).To(BeFalse())
}

// TestVersionsDropOld: a copy is used for keep after its write; one no round asks for
// again (a converged object) is dropped by the sweep, which comes back while copies are
// left; the record of the write stays.
func TestVersionsDropOld(t *testing.T) {
	g := NewWithT(t)
	clock := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	v := NewVersions()
	v.now = func() time.Time { return clock }
	v.keep = time.Hour // the test calls dropOld itself
	cm := func(uid types.UID, rv string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{UID: uid, ResourceVersion: rv}}
	}
	v.Record(cm("u1", "10"))
	clock = clock.Add(40 * time.Minute)
	v.Record(cm("u2", "11"))
	clock = clock.Add(20 * time.Minute)
	g.Expect(v.Refresh(cm("u1", "9"))).To(BeFalse(), "an hour after its write, u1's copy is not used")
	g.Expect(v.Refresh(cm("u2", "10"))).To(BeTrue(), "u2's is")
	v.dropOld()
	g.Expect(v.objects).To(HaveLen(1), "u1's copy dropped")
	g.Expect(v.objects).To(HaveKey(types.UID("u2")))
	g.Expect(v.sweep).NotTo(BeNil(), "the sweep comes back for u2's")
	v.sweep.Stop()
	clock = clock.Add(40 * time.Minute)
	v.dropOld()
	g.Expect(v.objects).To(BeEmpty())
	g.Expect(v.sweep).To(BeNil(), "no sweep left once no copy is")
	g.Expect(v.Stale(cm("u1", "9"))).To(BeTrue(), "the write is still recorded: an older cache is read past")

	// The timer itself.
	timed := NewVersions()
	timed.keep = 10 * time.Millisecond
	timed.Record(cm("u3", "12"))
	count := func() int {
		timed.mu.Lock()
		defer timed.mu.Unlock()
		return len(timed.objects)
	}
	g.Eventually(count).WithTimeout(5 * time.Second).Should(BeZero())
}
