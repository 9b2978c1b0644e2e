package keystoneapi

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/internal/permissions"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// jobTailLength bounds the part of a pod's termination message quoted in a condition.
const jobTailLength = 300

// jobInputs says what a job step runs for. Public is a digest of public values only:
// status.hash[HashKey] and the Job's annotation carry it. Secret, when set, is the MAC
// of the secret values the step also depends on (the admin password of bootstrap); it
// is kept in the private state Secret, never published.
type jobInputs struct {
	HashKey string
	Public  string
	Secret  string
}

// reconcileDBSync marks DBSyncReady: db_sync ran for the current configuration and image.
func (r *Reconciler) reconcileDBSync(ctx context.Context, s *scope) (ctrl.Result, error) {
	if s.configRevision == "" {
		return ctrl.Result{}, nil // no configuration yet: waiting for ServiceConfigReady
	}
	s.in.DBSyncHash = deploy.DBSyncDigest(s.api, s.configRevision)
	in := jobInputs{HashKey: deploy.HashDBSync, Public: s.in.DBSyncHash}
	return ctrl.Result{}, r.runJob(ctx, s, keystonev1.KeystoneAPIDBSyncReady, in, s.in.DBSyncJob())
}

// reconcileBootstrap marks BootstrapReady: bootstrap ran for the current database,
// image, admin identity, region and endpoints (published as a digest), and for the
// current admin password (remembered only in the private state Secret). A new
// configuration alone does not run it again.
func (r *Reconciler) reconcileBootstrap(ctx context.Context, s *scope) (ctrl.Result, error) {
	api := s.api
	step := keystonev1.KeystoneAPIBootstrapReady
	if !s.round.IsTrue(keystonev1.KeystoneAPIInputReady) {
		return ctrl.Result{}, nil // without the admin password nothing can be said: waiting
	}
	if err := r.loadPrivateState(ctx, s, s.acting(step)); err != nil || s.private == nil {
		return ctrl.Result{}, err
	}
	in := jobInputs{HashKey: deploy.HashBootstrap, Public: deploy.BootstrapDigest(api),
		Secret: deploy.PrivateMAC(s.private.Data, map[string]string{"adminPassword": s.adminPassword})}
	s.in.BootstrapHash = in.Public
	return ctrl.Result{}, r.runJob(ctx, s, step, in, s.in.BootstrapJob())
}

// runJob drives a job step: done when it last succeeded for in; otherwise it makes
// sure a Job for in exists and reports it running, failed (with attempts and the pod's
// termination reason) or succeeded. A Job built for other inputs is replaced. While
// the step may not act, only a Job for in that exists already is observed.
func (r *Reconciler) runJob(ctx context.Context, s *scope, step lc.Type, in jobInputs, desired *batchv1.Job) error {
	if s.api.Status.Hash[in.HashKey] == in.Public && s.privateValue(deploy.DoneKey(in.HashKey)) == in.Secret {
		s.round.Apply(step, jobRecordedVerdict(desired.Name))
		return nil
	}
	if !s.acting(step) {
		job := &batchv1.Job{}
		if err := r.Get(ctx, client.ObjectKeyFromObject(desired), job); err != nil {
			return client.IgnoreNotFound(err)
		}
		if job.Annotations[deploy.HashAnnotation] != in.Public || s.privateValue(deploy.PendingKey(in.HashKey)) != in.Secret {
			return nil // a Job of other inputs: waiting to replace it
		}
		return r.observeJob(ctx, s, step, in, job)
	}
	done, why, err := r.upstreamJobDone(ctx, s, in)
	if err != nil {
		return err
	}
	if done {
		if err := r.recordDone(ctx, s, in); err != nil {
			return err
		}
		// Why it is not run is said once, in an Event: the step's message is the one every
		// later round gives, so that this round's status write is not followed by another.
		r.Reporter.Recorder.Eventf(s.api, corev1.EventTypeNormal, "JobNotRunAgain", "job %s not run again: %s", desired.Name, why)
		s.round.Apply(step, jobRecordedVerdict(desired.Name))
		return nil
	}
	job, err := r.jobFor(ctx, s, step, in, desired)
	if err != nil || job == nil {
		return err
	}
	return r.observeJob(ctx, s, step, in, job)
}

// jobFor returns the Job of the current inputs; nil, with the step marked, when it
// created the Job or deleted one built for other inputs.
func (r *Reconciler) jobFor(ctx context.Context, s *scope, step lc.Type, in jobInputs, desired *batchv1.Job) (*batchv1.Job, error) {
	job := &batchv1.Job{}
	err := r.Get(ctx, client.ObjectKeyFromObject(desired), job)
	switch {
	case apierrors.IsNotFound(err):
		// The pending record comes first: a crash before the create leaves no Job
		// that could be taken for another input's.
		if err := r.setPrivateValue(ctx, s, deploy.PendingKey(in.HashKey), in.Secret); err != nil {
			return nil, err
		}
		if err := controllerutil.SetControllerReference(s.api, desired, r.Scheme()); err != nil {
			return nil, fmt.Errorf("owning job %s: %w", desired.Name, err)
		}
		if err := r.Create(ctx, desired); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("creating job %s: %w", desired.Name, err)
		}
		s.round.Apply(step, jobLaunchedVerdict(desired.Name, false))
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading job %s: %w", desired.Name, err)
	}
	if job.Annotations[deploy.HashAnnotation] != in.Public || s.privateValue(deploy.PendingKey(in.HashKey)) != in.Secret {
		if err := r.Delete(ctx, job, client.PropagationPolicy("Background")); client.IgnoreNotFound(err) != nil {
			return nil, fmt.Errorf("replacing job %s: %w", job.Name, err)
		}
		s.round.Apply(step, jobLaunchedVerdict(job.Name, true))
		return nil, nil
	}
	return job, nil
}

// observeJob marks the step from the Job of the current inputs; a succeeded Job is
// recorded (status.hash, the private state) and deleted unless preserveJobs. A Job is
// succeeded once the Job controller says so, or, a second earlier, once the one pod it
// runs has succeeded (succeededPod).
func (r *Reconciler) observeJob(ctx context.Context, s *scope, step lc.Type, in jobInputs, job *batchv1.Job) error {
	complete := finished(job, batchv1.JobComplete)
	if !complete {
		pod, err := r.succeededPod(ctx, job)
		if err != nil {
			return err
		}
		complete = pod != nil
	}
	if complete {
		if err := r.recordDone(ctx, s, in); err != nil {
			return err
		}
		if !s.api.Spec.PreserveJobs {
			if err := r.Delete(ctx, job, client.PropagationPolicy("Background")); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("deleting finished job %s: %w", job.Name, err)
			}
		}
	}
	failure := ""
	if finished(job, batchv1.JobFailed) {
		failure = r.lastPodFailure(ctx, job)
	}
	s.round.Apply(step, jobVerdict(job, complete, failure))
	return nil
}

// succeededPod returns the pod of job that succeeded, nil for none. A Job of one
// completion is done once its pod has succeeded: the Job controller writes so about a
// second later (its batching of pod updates), and a KeystoneAPI's next step need not wait
// for that. Only a pod the Job controls counts, and only once it has succeeded: a failed
// pod leaves the Job to retry or fail, a running pod being deleted may still fail. Read
// from the cache of the jobs' pods (deploy.JobLabel), kept only where the manager may
// watch pods (r.JobPods); nil without it, the Job's own completion then being waited for.
func (r *Reconciler) succeededPod(ctx context.Context, job *batchv1.Job) (*corev1.Pod, error) {
	if !r.jobPods || job.DeletionTimestamp != nil || finished(job, batchv1.JobFailed) ||
		(job.Spec.Completions != nil && *job.Spec.Completions != 1) {
		return nil, nil
	}
	pods := &corev1.PodList{}
	if err := r.List(ctx, pods, client.InNamespace(job.Namespace), client.MatchingLabels{deploy.JobLabel: job.Name}); err != nil {
		return nil, fmt.Errorf("listing the pods of job %s: %w", job.Name, err)
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if owner := metav1.GetControllerOf(pod); owner != nil && owner.UID == job.UID && pod.Status.Phase == corev1.PodSucceeded {
			return pod, nil
		}
	}
	return nil, nil
}

// recordDone records that the job of in ran for the current inputs: its public digest
// in status.hash, what it knew of the secret ones in the private state Secret.
func (r *Reconciler) recordDone(ctx context.Context, s *scope, in jobInputs) error {
	if err := r.setPrivateValue(ctx, s, deploy.DoneKey(in.HashKey), in.Secret); err != nil {
		return err
	}
	setHash(s.api, in.HashKey, in.Public)
	return nil
}

// mayWatchJobPods tells whether the manager may list and watch pods, as the API server
// said at start (openstack-operator's role for keystone-operator grants get and list).
func mayWatchJobPods(c client.Client) bool {
	return permissions.Allows(c, "list", "", "pods") && permissions.Allows(c, "watch", "", "pods")
}

// jobPodsAPI wakes the KeystoneAPI a job's pod runs for (deploy.JobPodLabels).
func jobPodsAPI(_ context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[deploy.APILabel]
	if name == "" || o.GetLabels()[deploy.JobLabel] == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
}

// podFinished passes a job's pod that has just succeeded or failed: what a running
// job's pods do before is the Job's own status, watched besides.
var podFinished = predicate.Funcs{
	CreateFunc:  func(e event.CreateEvent) bool { return podDone(e.Object) },
	UpdateFunc:  func(e event.UpdateEvent) bool { return podDone(e.ObjectNew) && !podDone(e.ObjectOld) },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

func podDone(o client.Object) bool {
	pod, ok := o.(*corev1.Pod)
	return ok && (pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed)
}

func finished(job *batchv1.Job, t batchv1.JobConditionType) bool {
	for _, c := range job.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// lastPodFailure reads what the last failed pod of a Job says: its name, termination
// reason, exit code and the line of its log that says why; "" when none says. Read from
// the API server, not the cache: a cached read would start an informer on every Pod of
// the cluster for a message about one Job's pods.
func (r *Reconciler) lastPodFailure(ctx context.Context, job *batchv1.Job) string {
	pods := &corev1.PodList{}
	if err := r.Reporter.Reader.List(ctx, pods, client.InNamespace(job.Namespace), client.MatchingLabels{"job-name": job.Name}); err != nil {
		return "its pods could not be read: " + err.Error()
	}
	sort.Slice(pods.Items, func(i, j int) bool {
		return pods.Items[j].CreationTimestamp.Before(&pods.Items[i].CreationTimestamp)
	})
	for _, pod := range pods.Items {
		for _, cs := range pod.Status.ContainerStatuses {
			if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
				return fmt.Sprintf("last pod %s: %s, exit code %d%s", pod.Name, t.Reason, t.ExitCode, tail(deploy.FailureLine(t.Message)))
			}
		}
	}
	return ""
}

func tail(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	if len(s) > jobTailLength {
		cut := len(s) - jobTailLength
		for cut < len(s) && !utf8.RuneStart(s[cut]) {
			cut++
		}
		s = "…" + s[cut:]
	}
	return ": " + s
}

// jobVerdict is DBSyncReady or BootstrapReady from the step's Job (a Job of the current
// inputs): True once it completed (complete: the Job says so, or its pod succeeded), worded as the rounds after it, which find its success
// recorded, word it (jobRecordedVerdict), so that the round that made the step True is
// its last status write; CreationFailed (Error) once it failed, with the Job's attempts and reason
// and podFailure (what its last failed pod said, "" for nothing); Created (Info) while
// it runs.
func jobVerdict(job *batchv1.Job, complete bool, podFailure string) condition.Verdict {
	switch {
	case complete:
		return jobRecordedVerdict(job.Name)
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

// jobRecordedVerdict is DBSyncReady or BootstrapReady when the job named name need not
// run: True, its success for the current inputs recorded (by this operator, or by
// keystone-operator before it, which an Event says).
func jobRecordedVerdict(name string) condition.Verdict {
	return condition.TrueVerdict("job %s succeeded for the current inputs", name)
}

// jobLaunchedVerdict is DBSyncReady or BootstrapReady the round it created the job named
// name, or deleted one of other inputs to replace it (replacing): Created (Info).
func jobLaunchedVerdict(name string, replacing bool) condition.Verdict {
	if replacing {
		return condition.FalseVerdict(condition.Created, "job %s is replaced for new inputs", name)
	}
	return condition.FalseVerdict(condition.Created, "job %s created", name)
}
