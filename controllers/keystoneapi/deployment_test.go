package keystoneapi

import (
	"testing"

	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestRolloutVerdict(t *testing.T) {
	dep := func(generation, observed int64, replicas, updated, available, ready int32, conds ...appsv1.DeploymentCondition) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Generation: generation},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2)},
			Status: appsv1.DeploymentStatus{ObservedGeneration: observed, Replicas: replicas, UpdatedReplicas: updated,
				AvailableReplicas: available, ReadyReplicas: ready, Conditions: conds}}
	}
	deadline := appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse,
		Reason: "ProgressDeadlineExceeded", Message: `ReplicaSet "keystone-1" has timed out progressing.`}
	tests := []struct {
		name       string
		dep        *appsv1.Deployment
		waitingFor lc.Type
		want       verdictOf
	}{
		{"a new spec not seen yet", dep(3, 2, 2, 2, 2, 2), "", verdictOf{false, "Created", lc.SeverityInfo,
			"deployment keystone: rollout of the new spec starting"}},
		{"past its progress deadline", dep(3, 3, 3, 1, 2, 2, deadline), "", verdictOf{false, "CreationFailed", lc.SeverityError,
			`deployment keystone exceeded its progress deadline: ReplicaSet "keystone-1" has timed out progressing.`}},
		{"rolling", dep(3, 3, 3, 1, 2, 2), "", verdictOf{false, "Created", lc.SeverityInfo,
			"deployment keystone: 2/2 replicas ready, 1 updated"}},
		{"rolled out", dep(3, 3, 2, 2, 2, 2), "", verdictOf{true, "", "", "deployment keystone: 2/2 replicas ready"}},
		{"rolled out while an earlier step waits", dep(3, 3, 2, 2, 2, 2), "DBSyncReady", verdictOf{true, "", "",
			"deployment keystone: 2/2 replicas ready; its pods keep their configuration until DBSyncReady is True"}},
		{"an old pod still terminating", dep(3, 3, 3, 2, 2, 2), "", verdictOf{false, "Created", lc.SeverityInfo,
			"deployment keystone: 2/2 replicas ready, 2 updated"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(brief(rolloutVerdict(tt.dep, tt.waitingFor))).To(Equal(tt.want))
		})
	}
	NewWithT(t).Expect(brief(attachmentsMissingVerdict([]string{"internalapi", "storage"}))).To(Equal(verdictOf{false,
		"DependencyNotFound", lc.SeverityWarning, "NetworkAttachmentDefinition internalapi, storage not found (networkAttachments)"}))
}
