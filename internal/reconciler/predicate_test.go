package reconciler

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

func TestIgnoreStatusUpdates(t *testing.T) {
	base := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Generation: 1, ResourceVersion: "1", Labels: map[string]string{"a": "b"}}}
	tests := []struct {
		name   string
		mutate func(*corev1.Pod)
		want   bool
	}{
		{"status only", func(p *corev1.Pod) { p.Status.Phase = corev1.PodRunning }, false},
		{"new generation", func(p *corev1.Pod) { p.Generation = 2 }, true},
		{"annotation", func(p *corev1.Pod) { p.Annotations = map[string]string{"touch": "1"} }, true},
		{"label", func(p *corev1.Pod) { p.Labels = map[string]string{"a": "c"} }, true},
		{"finalizer only", func(p *corev1.Pod) { p.Finalizers = []string{"x/y"} }, false},
		{"deletion", func(p *corev1.Pod) { now := metav1.Now(); p.DeletionTimestamp = &now }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := base.DeepCopy()
			n.ResourceVersion = "2"
			tt.mutate(n)
			NewWithT(t).Expect(IgnoreStatusUpdates.Update(event.UpdateEvent{ObjectOld: base, ObjectNew: n})).To(Equal(tt.want))
		})
	}
}

func TestIgnoreOwnUpdates(t *testing.T) {
	p := IgnoreOwnUpdates("own/id")
	base := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Generation: 1, Annotations: map[string]string{"user/x": "1"}}}
	tests := []struct {
		name        string
		annotations map[string]string
		want        bool
	}{
		{"own annotation added", map[string]string{"user/x": "1", "own/id": "abc"}, false},
		{"another annotation changed", map[string]string{"user/x": "2"}, true},
		{"both changed", map[string]string{"user/x": "2", "own/id": "abc"}, true},
		{"annotations cleared", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := base.DeepCopy()
			n.Annotations = tt.annotations
			NewWithT(t).Expect(p.Update(event.UpdateEvent{ObjectOld: base, ObjectNew: n})).To(Equal(tt.want))
		})
	}
}

// TestTouched: Touched changes with what IgnoreOwnUpdates passes as a person's change
// (the spec, a label, an annotation but the own ones) and with nothing else: not a
// status, a finalizer, an own annotation or a new resourceVersion.
func TestTouched(t *testing.T) {
	base := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Generation: 1, ResourceVersion: "1", Labels: map[string]string{"a": "b"},
		Annotations: map[string]string{"user/x": "1"}}}
	tests := []struct {
		name    string
		mutate  func(*corev1.Pod)
		touched bool
	}{
		{"status only", func(p *corev1.Pod) { p.Status.Phase = corev1.PodRunning }, false},
		{"finalizer only", func(p *corev1.Pod) { p.Finalizers = []string{"x/y"} }, false},
		{"own annotation", func(p *corev1.Pod) { p.Annotations["own/id"] = "abc" }, false},
		{"new generation", func(p *corev1.Pod) { p.Generation = 2 }, true},
		{"annotation", func(p *corev1.Pod) { p.Annotations["user/x"] = "2" }, true},
		{"annotation added", func(p *corev1.Pod) { p.Annotations["touch"] = "1" }, true},
		{"label", func(p *corev1.Pod) { p.Labels = map[string]string{"a": "c"} }, true},
		{"a label moved to the annotations", func(p *corev1.Pod) { p.Labels, p.Annotations["a"] = nil, "b" }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			n := base.DeepCopy()
			n.ResourceVersion = "2"
			tt.mutate(n)
			if tt.touched {
				g.Expect(Touched(n, "own/id")).NotTo(Equal(Touched(base, "own/id")))
			} else {
				g.Expect(Touched(n, "own/id")).To(Equal(Touched(base, "own/id")))
			}
			g.Expect(IgnoreOwnUpdates("own/id").Update(event.UpdateEvent{ObjectOld: base, ObjectNew: n})).To(Equal(tt.touched),
				"the predicate agrees")
		})
	}
}
