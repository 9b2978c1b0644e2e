package condition

import (
	"testing"

	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

// TestKstatus checks that tools following kstatus (Flux, kpt, cli-utils) read our
// status as the contract says.
func TestKstatus(t *testing.T) {
	tests := []struct {
		name       string
		mark       func(r *Round)
		generation int64
		observed   int64
		want       status.Status
	}{
		{"Ready for the current generation is Current", func(r *Round) {
			r.MarkTrue(stepA, "ok")
			r.MarkTrue(stepB, "ok")
			r.MarkTrue(stepC, "ok")
		}, 2, 2, status.CurrentStatus},
		{"steps progressing is InProgress", func(r *Round) {
			r.MarkTrue(stepA, "ok")
			r.MarkFalse(stepB, Created, "job running")
		}, 2, 2, status.InProgressStatus},
		{"a dependency missing is InProgress", func(r *Round) {
			r.MarkFalse(stepA, DependencyNotFound, "secret missing")
		}, 2, 2, status.InProgressStatus},
		{"a step False with severity Error is Failed", func(r *Round) {
			r.MarkTrue(stepA, "ok")
			r.MarkFalse(stepB, CreationFailed, "job failed")
		}, 2, 2, status.FailedStatus},
		{"Ready for an older generation is InProgress", func(r *Round) {
			r.MarkTrue(stepA, "ok")
			r.MarkTrue(stepB, "ok")
			r.MarkTrue(stepC, "ok")
		}, 3, 2, status.InProgressStatus},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			r := testSteps.Begin(nil, t0)
			tt.mark(r)
			obj := toUnstructured(g, r.Finish(nil).Conditions, tt.generation, tt.observed)
			res, err := status.Compute(obj)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(res.Status).To(Equal(tt.want), res.Message)
		})
	}
}

func toUnstructured(g Gomega, conds lc.Conditions, generation, observed int64) *unstructured.Unstructured {
	type statusT struct {
		Conditions         lc.Conditions `json:"conditions"`
		ObservedGeneration int64         `json:"observedGeneration"`
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&struct {
		Status statusT `json:"status"`
	}{statusT{conds, observed}})
	g.Expect(err).NotTo(HaveOccurred())
	obj := &unstructured.Unstructured{Object: content}
	obj.SetAPIVersion("keystone.openstack.org/v1beta1")
	obj.SetKind("KeystoneAPI")
	obj.SetName("keystone")
	obj.SetGeneration(generation)
	return obj
}
