package keystoneapi

import (
	"fmt"

	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// The decisions of KeystoneAPI's steps: pure functions from what a phase observed to
// the step's verdict, each covered reason by reason in status_test.go.

// rolloutVerdict is DeploymentReady from the Deployment: True once every replica of the
// current spec is updated and available (and, while an earlier step is not True,
// saying the pods keep their configuration until waitingFor is); a rollout in progress
// is Created (Info); a progress deadline exceeded is CreationFailed (Error).
func rolloutVerdict(dep *appsv1.Deployment, waitingFor lc.Type) condition.Verdict {
	want, deadline := ptr.Deref(dep.Spec.Replicas, 1), deadlineExceeded(dep)
	switch {
	case dep.Status.ObservedGeneration < dep.Generation:
		return condition.FalseVerdict(condition.Created, "deployment %s: rollout of the new spec starting", dep.Name)
	case deadline != "":
		return condition.FalseVerdict(condition.CreationFailed, "deployment %s exceeded its progress deadline: %s", dep.Name, deadline)
	case dep.Status.UpdatedReplicas == want && dep.Status.AvailableReplicas == want && dep.Status.Replicas == want:
		msg := fmt.Sprintf("deployment %s: %d/%d replicas ready", dep.Name, dep.Status.ReadyReplicas, want)
		if waitingFor != "" {
			msg += fmt.Sprintf("; its pods keep their configuration until %s is True", waitingFor)
		}
		return condition.TrueVerdict("%s", msg)
	}
	return condition.FalseVerdict(condition.Created, "deployment %s: %d/%d replicas ready, %d updated", dep.Name,
		dep.Status.ReadyReplicas, want, dep.Status.UpdatedReplicas)
}

// jobVerdict is DBSyncReady or BootstrapReady from the step's Job: True once it
// completed; CreationFailed (Error) once it failed, with the Job's attempts and reason
// and podFailure (what its last failed pod said, "" for nothing); Created (Info) while
// it runs.
func jobVerdict(job *batchv1.Job, podFailure string) condition.Verdict {
	switch {
	case finished(job, batchv1.JobComplete):
		return condition.TrueVerdict("job %s succeeded", job.Name)
	case finished(job, batchv1.JobFailed):
		msg := fmt.Sprintf("job %s failed after %d attempts", job.Name, job.Status.Failed)
		for _, c := range job.Status.Conditions {
			if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
				msg += fmt.Sprintf(" (%s: %s)", c.Reason, c.Message)
			}
		}
		if podFailure != "" {
			msg += "; " + podFailure
		}
		return condition.FalseVerdict(condition.CreationFailed, "%s", msg)
	}
	return condition.FalseVerdict(condition.Created, "job %s running (%d failed attempts so far)", job.Name, job.Status.Failed)
}
