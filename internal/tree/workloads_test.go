package tree

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// podTemplate is a pod template the API server takes.
func podTemplate(labels map[string]string, restart corev1.RestartPolicy) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{RestartPolicy: restart, Containers: []corev1.Container{{Name: "keystone", Image: "keystone:current"}}}}
}

// createPod makes a pod of the selector's labels with status, created a moment after the
// previous one (pods are drawn oldest first).
func createPod(g Gomega, ns, name string, labels map[string]string, status corev1.PodStatus) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "keystone", Image: "keystone:current"}}}}
	create(g, ns, pod, func() { pod.Status = status })
}

// TestBlockedOnBootstrap: the tree of a KeystoneAPI waiting on its bootstrap Job, against
// a real API server: the Job with its last failed pod's reason, not the db-sync Job nor
// the Deployment; -o wide draws them all with their pods.
func TestBlockedOnBootstrap(t *testing.T) {
	needAPIServer(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := namespace(g, "blocked-on-bootstrap")
	api := keystoneAPI()
	create(g, ns, api, func() {
		failing := "job keystone-bootstrap failed 2 of 3 attempts: Error (exit code 1): keystone-manage bootstrap: Could not find role: admin"
		api.Status.Conditions = lc.Conditions{
			cond("Ready", "False", "Created", lc.SeverityInfo, "BootstrapReady (11/14 ready): "+failing),
			ok("DBSyncReady", "job keystone-db-sync completed"),
			cond("BootstrapReady", "False", "Created", lc.SeverityInfo, failing),
			cond("DeploymentReady", "False", "Created", lc.SeverityInfo, "0 of 1 pods ready"),
		}
	})
	own := func(obj client.Object) {
		obj.SetNamespace(ns)
		g.Expect(controllerutil.SetControllerReference(api, obj, c.Scheme())).To(Succeed())
	}
	for _, name := range []string{"keystone-db-sync", "keystone-bootstrap"} {
		job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: batchv1.JobSpec{Template: podTemplate(nil, corev1.RestartPolicyNever)}}
		own(job)
		g.Expect(c.Create(ctx, job)).To(Succeed())
		selected := job.Spec.Selector.MatchLabels // the API server's: job-name and the Job's UID
		job.Status.StartTime = &metav1.Time{Time: changed}
		if name == "keystone-db-sync" {
			createPod(g, ns, name+"-a", selected, corev1.PodStatus{Phase: corev1.PodSucceeded})
			job.Status.Succeeded, job.Status.CompletionTime = 1, &metav1.Time{Time: changed}
			for _, t := range []batchv1.JobConditionType{batchv1.JobSuccessCriteriaMet, batchv1.JobComplete} {
				job.Status.Conditions = append(job.Status.Conditions, batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue})
			}
			g.Expect(c.Status().Update(ctx, job)).To(Succeed())
			continue
		}
		for _, attempt := range []string{"a", "b"} {
			createPod(g, ns, name+"-"+attempt, selected, corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{
				Name: "keystone-bootstrap", Image: "keystone:current", ImageID: "keystone@sha256:1",
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1,
					Message: "keystone-manage bootstrap: Could not find role: admin (attempt " + attempt + ")\nTraceback"}}}}})
		}
		createPod(g, ns, name+"-c", selected, corev1.PodStatus{Phase: corev1.PodPending})
		job.Status.Active, job.Status.Failed = 1, 2
		g.Expect(c.Status().Update(ctx, job)).To(Succeed())
	}
	selector := map[string]string{"service": "keystone", "owner": "keystone"}
	deployment := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "keystone"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: selector},
			Template: podTemplate(selector, corev1.RestartPolicyAlways)}}
	own(deployment)
	g.Expect(c.Create(ctx, deployment)).To(Succeed())
	createPod(g, ns, "keystone-5f7-x", selector, corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{
		Name: "keystone-api", Image: "keystone:current", ImageID: "",
		State:        corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 40s restarting failed container"}},
		RestartCount: 3}}})
	deployment.Status.Replicas, deployment.Status.UpdatedReplicas = 1, 1
	g.Expect(c.Status().Update(ctx, deployment)).To(Succeed())

	golden(t, "blocked-on-bootstrap.txt", render(g, ns, nil, Options{Show: ShowBlocking}))
	golden(t, "blocked-on-bootstrap-wide.txt", render(g, ns, nil, Options{Wide: true}))
}
