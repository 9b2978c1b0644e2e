package keystoneapi

import (
	"context"
	"slices"
	"testing"

	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
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
		name         string
		job          *batchv1.Job
		podSucceeded bool
		podFailure   string
		want         verdictOf
	}{
		{"running", job(0), false, "", verdictOf{false, "Created", lc.SeverityInfo, "job keystone-db-sync running (0 failed attempts so far)"}},
		{"retrying", job(2, notYetFailed), false, "", verdictOf{false, "Created", lc.SeverityInfo,
			"job keystone-db-sync running (2 failed attempts so far)"}},
		{"succeeded after retries", job(1, complete), false, "", verdictOf{true, "", "", "job keystone-db-sync succeeded for the current inputs"}},
		{"its pod succeeded, the Job controller not yet saying so", job(1), true, "",
			verdictOf{true, "", "", "job keystone-db-sync succeeded for the current inputs"}},
		{"failed, its pod telling why", job(4, failed), false, "last pod keystone-db-sync-x: Error, exit code 1: OperationalError",
			verdictOf{false, "CreationFailed", lc.SeverityError, "job keystone-db-sync failed after 4 attempts " +
				"(BackoffLimitExceeded: Job has reached the specified backoff limit); last pod keystone-db-sync-x: Error, exit code 1: OperationalError"}},
		{"failed, no pod left", job(4, failed), false, "", verdictOf{false, "CreationFailed", lc.SeverityError,
			"job keystone-db-sync failed after 4 attempts (BackoffLimitExceeded: Job has reached the specified backoff limit)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(brief(jobVerdict(tt.job, finished(tt.job, batchv1.JobComplete) || tt.podSucceeded, tt.podFailure))).To(Equal(tt.want))
		})
	}
}

// TestSucceededPod: a Job of one completion is done once a pod it controls has
// succeeded; a pod of another Job (or none), a failed one, a running one being deleted,
// a Job of more completions or one that failed, and a manager without the pods' watch
// (openstack-operator's role) wait for the Job controller.
func TestSucceededPod(t *testing.T) {
	g := NewWithT(t)
	scheme := runtime.NewScheme()
	g.Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "keystone-db-sync", Namespace: "openstack", UID: "job-uid"}}
	now := metav1.Now()
	pod := func(name, owner string, phase corev1.PodPhase, deleting bool) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "openstack",
			Labels: map[string]string{deploy.JobLabel: job.Name}}, Status: corev1.PodStatus{Phase: phase}}
		if owner != "" {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.Name,
				UID: types.UID(owner), Controller: ptr.To(true)}}
		}
		if deleting {
			p.DeletionTimestamp, p.Finalizers = &now, []string{"batch.kubernetes.io/job-tracking"}
		}
		return p
	}
	find := func(watched bool, job *batchv1.Job, pods ...*corev1.Pod) string {
		b := fake.NewClientBuilder().WithScheme(scheme)
		for _, p := range pods {
			b = b.WithObjects(p)
		}
		r := &Reconciler{Client: b.Build(), jobPods: watched}
		found, err := r.succeededPod(context.Background(), job)
		g.Expect(err).NotTo(HaveOccurred())
		if found == nil {
			return ""
		}
		return found.Name
	}
	notYet := []*corev1.Pod{
		pod("unowned", "", corev1.PodSucceeded, false),
		pod("another-jobs", "other-uid", corev1.PodSucceeded, false),
		pod("failed", "job-uid", corev1.PodFailed, false),
		pod("deleted-running", "job-uid", corev1.PodRunning, true),
	}
	g.Expect(find(true, job, notYet...)).To(BeEmpty(), "no pod of this Job succeeded")
	done := append(slices.Clone(notYet), pod("retry", "job-uid", corev1.PodSucceeded, false))
	g.Expect(find(true, job, done...)).To(Equal("retry"), "its second attempt succeeded")
	g.Expect(find(false, job, done...)).To(BeEmpty(), "without the pods' watch the Job's completion is waited for")
	more := job.DeepCopy()
	more.Spec.Completions = ptr.To[int32](2)
	g.Expect(find(true, more, done...)).To(BeEmpty(), "a Job of two completions is not done at its first pod")
	failedJob := job.DeepCopy()
	failedJob.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue}}
	g.Expect(find(true, failedJob, done...)).To(BeEmpty(), "a failed Job stays failed")
}
