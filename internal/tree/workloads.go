package tree

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The steps a KeystoneAPI's pods carry out, and the workload each waits on: the
// db-sync and bootstrap Jobs (by their name's suffix, the same for keystone-operator's)
// and the API Deployment.
var stepWorkloads = map[string]func(api string, obj client.Object) bool{
	string(keystonev1.KeystoneAPIDBSyncReady):     jobNamed("-db-sync"),
	string(keystonev1.KeystoneAPIBootstrapReady):  jobNamed("-bootstrap"),
	string(keystonev1.KeystoneAPIDeploymentReady): func(_ string, obj client.Object) bool { _, ok := obj.(*appsv1.Deployment); return ok },
}

func jobNamed(suffix string) func(api string, obj client.Object) bool {
	return func(api string, obj client.Object) bool {
		_, ok := obj.(*batchv1.Job)
		return ok && obj.GetName() == api+suffix
	}
}

// workloads are the namespace's Jobs, Deployments and pods, read only when a tree
// draws one of them.
type workloads struct {
	jobs        batchv1.JobList
	deployments appsv1.DeploymentList
	pods        corev1.PodList
	// forbidden names the kinds the user may not list.
	forbidden []string
}

// needsWorkloads says whether a KeystoneAPI's node draws workloads: it waits on a step
// its pods carry out, or everything is drawn (wide).
func (w *world) needsWorkloads() bool {
	if w.opts.Wide {
		return len(w.apis.Items) > 0
	}
	for i := range w.apis.Items {
		if stepWorkloads[blockingStep(w.apis.Items[i].Status.Conditions)] != nil {
			return true
		}
	}
	return false
}

func (w *world) readWorkloads(ctx context.Context, c client.Reader) error {
	for _, l := range []struct {
		list client.ObjectList
		kind string
	}{{&w.work.jobs, "Jobs"}, {&w.work.deployments, "Deployments"}, {&w.work.pods, "Pods"}} {
		switch err := c.List(ctx, l.list, client.InNamespace(w.ns)); {
		case apierrors.IsForbidden(err):
			w.work.forbidden = append(w.work.forbidden, l.kind)
		case err != nil:
			return fmt.Errorf("listing %s in namespace %s: %w", l.kind, w.ns, err)
		}
	}
	return nil
}

// workloadNodes draws the workloads api owns that its blocking step waits on, or,
// wide, every Job and Deployment it owns with their pods.
func (w *world) workloadNodes(api *keystonev1.KeystoneAPI) []*Node {
	wanted := stepWorkloads[blockingStep(api.Status.Conditions)]
	if !w.opts.Wide && wanted == nil {
		return nil
	}
	var out []*Node
	if len(w.work.forbidden) > 0 {
		out = append(out, &Node{Kind: "Workloads", Namespace: w.ns, Name: strings.ToLower(strings.Join(w.work.forbidden, ",")),
			Note: "not readable (forbidden to you)"})
	}
	owned := func(obj client.Object) bool {
		return ownedBy(obj, api.UID) && (w.opts.Wide || wanted(api.Name, obj))
	}
	for i := range w.work.jobs.Items {
		if job := &w.work.jobs.Items[i]; owned(job) {
			pods := w.podsOf(job.Spec.Selector)
			out = append(out, w.workloadNode("Job", job.Name, jobNote(job, pods), pods))
		}
	}
	for i := range w.work.deployments.Items {
		if d := &w.work.deployments.Items[i]; owned(d) {
			pods := w.podsOf(d.Spec.Selector)
			out = append(out, w.workloadNode("Deployment", d.Name, deploymentNote(d, pods), pods))
		}
	}
	return out
}

// workloadNode is a Job or Deployment with, wide, its pods.
func (w *world) workloadNode(kind, name, note string, pods []*corev1.Pod) *Node {
	n := &Node{Kind: kind, Namespace: w.ns, Name: name, Note: note}
	if w.opts.Wide {
		for _, p := range pods {
			n.Children = append(n.Children, &Node{Kind: "Pod", Namespace: w.ns, Name: p.Name, Note: podNote(p)})
		}
	}
	return n
}

func ownedBy(obj client.Object, uid types.UID) bool {
	return slices.ContainsFunc(obj.GetOwnerReferences(), func(r metav1.OwnerReference) bool { return r.UID == uid })
}

// podsOf are the namespace's pods a selector selects, oldest first.
func (w *world) podsOf(selector *metav1.LabelSelector) []*corev1.Pod {
	sel, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil || sel.Empty() {
		return nil
	}
	var out []*corev1.Pod
	for i := range w.work.pods.Items {
		if p := &w.work.pods.Items[i]; sel.Matches(labels.Set(p.Labels)) {
			out = append(out, p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		return out[i].CreationTimestamp.Before(&out[j].CreationTimestamp) ||
			(out[i].CreationTimestamp.Equal(&out[j].CreationTimestamp) && out[i].Name < out[j].Name)
	})
	return out
}

// jobNote is a Job's state: complete, failed with why, or running; with its last
// failed pod's reason and what a waiting pod waits on.
func jobNote(job *batchv1.Job, pods []*corev1.Pod) string {
	state := fmt.Sprintf("%d active, %d failed", job.Status.Active, job.Status.Failed)
	for _, c := range job.Status.Conditions {
		switch {
		case c.Status != corev1.ConditionTrue:
		case c.Type == batchv1.JobComplete:
			state = "complete"
		case c.Type == batchv1.JobFailed:
			state = words("failed:", c.Reason) + colon(c.Message)
		}
	}
	parts := []string{state}
	var lastFailed *corev1.Pod
	for _, p := range pods {
		if p.Status.Phase == corev1.PodFailed {
			lastFailed = p
		}
	}
	if lastFailed != nil {
		parts = append(parts, "last failed pod "+lastFailed.Name+": "+terminated(lastFailed))
	}
	return strings.Join(append(parts, waiting(pods)...), "; ")
}

// deploymentNote is a Deployment's ready/desired pods, a stuck rollout, and what a
// waiting pod waits on.
func deploymentNote(d *appsv1.Deployment, pods []*corev1.Pod) string {
	desired := int32(1)
	if d.Spec.Replicas != nil {
		desired = *d.Spec.Replicas
	}
	parts := []string{fmt.Sprintf("ready %d/%d, up to date %d", d.Status.ReadyReplicas, desired, d.Status.UpdatedReplicas)}
	for _, c := range d.Status.Conditions {
		if c.Status == corev1.ConditionFalse && (c.Type == appsv1.DeploymentProgressing || c.Type == appsv1.DeploymentReplicaFailure) {
			parts = append(parts, words(string(c.Type), c.Reason)+colon(c.Message))
		}
	}
	return strings.Join(append(parts, waiting(pods)...), "; ")
}

// terminated is why a failed pod's first failed container ended: its reason, exit code
// and the line of its message (a termination message or the log's tail) that says why,
// as the KeystoneAPI's own job steps pick it (deploy.FailureLine), cut to one line.
func terminated(p *corev1.Pod) string {
	for _, cs := range append(slices.Clone(p.Status.InitContainerStatuses), p.Status.ContainerStatuses...) {
		if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
			message, _, _ := strings.Cut(strings.TrimSpace(deploy.FailureLine(t.Message)), "\n")
			return words("container "+cs.Name, t.Reason, fmt.Sprintf("(exit code %d)", t.ExitCode)) + colon(message)
		}
	}
	return words(p.Status.Reason) + colon(p.Status.Message)
}

// waiting says, for each pod not yet running, what its containers wait on
// (ImagePullBackOff, CrashLoopBackOff, ...) or why it is not scheduled.
func waiting(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if why := podWaits(p); why != "" {
			out = append(out, "pod "+p.Name+" waiting: "+why)
		}
	}
	return out
}

func podWaits(p *corev1.Pod) string {
	for _, cs := range append(slices.Clone(p.Status.InitContainerStatuses), p.Status.ContainerStatuses...) {
		if wt := cs.State.Waiting; wt != nil && wt.Reason != "" && wt.Reason != "PodInitializing" && wt.Reason != "ContainerCreating" {
			return words("container "+cs.Name, wt.Reason) + colon(wt.Message)
		}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return words("not scheduled", c.Reason) + colon(c.Message)
		}
	}
	return ""
}

// podNote is a pod's phase, readiness, restarts and node (wide).
func podNote(p *corev1.Pod) string {
	parts := []string{string(p.Status.Phase)}
	if p.DeletionTimestamp != nil {
		parts[0] = "Terminating"
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			parts = append(parts, "ready")
		}
	}
	restarts := int32(0)
	for _, cs := range p.Status.ContainerStatuses {
		restarts += cs.RestartCount
	}
	if restarts > 0 {
		parts = append(parts, fmt.Sprintf("%d restarts", restarts))
	}
	if p.Spec.NodeName != "" {
		parts = append(parts, "node "+p.Spec.NodeName)
	}
	if p.Status.Phase == corev1.PodFailed {
		parts = append(parts, terminated(p))
	} else if why := podWaits(p); why != "" {
		parts = append(parts, why)
	}
	return strings.Join(parts, ", ")
}
