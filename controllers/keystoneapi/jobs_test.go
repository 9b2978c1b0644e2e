package keystoneapi

import (
	"testing"

	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestJobVerdict(t *testing.T) {
	job := func(failed int32, conds ...batchv1.JobCondition) *batchv1.Job {
		return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "keystone-db-sync"},
			Status: batchv1.JobStatus{Failed: failed, Conditions: conds}}
	}
	complete := batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}
	failed := batchv1.JobCondition{Type: batchv1.JobFailed, Status: corev1.ConditionTrue,
		Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit"}
	notYetFailed := batchv1.JobCondition{Type: batchv1.JobFailed, Status: corev1.ConditionFalse}
	tests := []struct {
		name       string
		job        *batchv1.Job
		podFailure string
		want       verdictOf
	}{
		{"running", job(0), "", verdictOf{false, "Created", lc.SeverityInfo, "job keystone-db-sync running (0 failed attempts so far)"}},
		{"retrying", job(2, notYetFailed), "", verdictOf{false, "Created", lc.SeverityInfo,
			"job keystone-db-sync running (2 failed attempts so far)"}},
		{"succeeded after retries", job(1, complete), "", verdictOf{true, "", "", "job keystone-db-sync succeeded for the current inputs"}},
		{"failed, its pod telling why", job(4, failed), "last pod keystone-db-sync-x: Error, exit code 1: OperationalError",
			verdictOf{false, "CreationFailed", lc.SeverityError, "job keystone-db-sync failed after 4 attempts " +
				"(BackoffLimitExceeded: Job has reached the specified backoff limit); last pod keystone-db-sync-x: Error, exit code 1: OperationalError"}},
		{"failed, no pod left", job(4, failed), "", verdictOf{false, "CreationFailed", lc.SeverityError,
			"job keystone-db-sync failed after 4 attempts (BackoffLimitExceeded: Job has reached the specified backoff limit)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(brief(jobVerdict(tt.job, tt.podFailure))).To(Equal(tt.want))
		})
	}
}
