package keystoneapi

import (
	"context"
	"fmt"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// TemplateAnnotation records the digest of the pod template last applied (deploy.TemplateAnnotation).
const TemplateAnnotation = deploy.TemplateAnnotation

// reconcileDeployment marks DeploymentReady from the Deployment's rollout and records
// status.readyCount. It rolls out once db-sync and the steps before it are True, while
// bootstrap runs (unneeded). While a step it needs is not True the Deployment keeps
// its pod template (its pods keep serving) and its readiness is still reported; a change
// of replicas is applied all the same: scaling needs nothing of the steps before.
func (r *Reconciler) reconcileDeployment(ctx context.Context, s *scope) (ctrl.Result, error) {
	api := s.api
	step := keystonev1.KeystoneAPIDeploymentReady
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: api.Name, Namespace: api.Namespace}}
	replicas := ptr.To(ptr.Deref(api.Spec.Replicas, 1))
	if s.acting(step) {
		if len(api.Spec.NetworkAttachments) == 0 {
			api.Status.NetworkAttachments = nil
		}
		missing, err := r.missingNetworks(ctx, api)
		if err != nil {
			return ctrl.Result{}, err
		}
		if len(missing) > 0 {
			s.round.Apply(step, attachmentsMissingVerdict(missing))
			return ctrl.Result{RequeueAfter: NetworkRecheckInterval}, nil
		}
		if err := r.Get(ctx, client.ObjectKeyFromObject(dep), dep); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("reading deployment %s: %w", dep.Name, err)
		}
		desired, err := s.gathered(dep.Spec.Selector).Deployment()
		if err != nil {
			return ctrl.Result{}, err
		}
		if _, err := controllerutil.CreateOrPatch(ctx, r.Client, dep, func() error {
			dep.Labels = deploy.MergeLabels(dep.Labels, desired.Labels)
			dep.Spec.Replicas = replicas
			dep.Spec.Selector = desired.Spec.Selector
			replaceTemplate(&dep.ObjectMeta, &desired.ObjectMeta, func() { dep.Spec.Template = desired.Spec.Template })
			return controllerutil.SetControllerReference(api, dep, r.Scheme())
		}); err != nil {
			return ctrl.Result{}, fmt.Errorf("ensuring deployment %s: %w", dep.Name, err)
		}
	} else {
		if err := r.Get(ctx, client.ObjectKeyFromObject(dep), dep); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
		if *replicas != ptr.Deref(dep.Spec.Replicas, 1) {
			patch := client.MergeFrom(dep.DeepCopy())
			dep.Spec.Replicas = replicas
			if err := r.Patch(ctx, dep, patch); err != nil {
				return ctrl.Result{}, fmt.Errorf("scaling deployment %s: %w", dep.Name, err)
			}
		}
	}
	api.Status.ReadyCount = dep.Status.ReadyReplicas
	markRollout(s, step, dep)
	if s.round.WaitingFor(step) == "" && s.round.IsTrue(step) {
		// The pods, and bootstrap, run with the current Memcached and account: the old
		// ones may go.
		return ctrl.Result{}, r.releaseStale(ctx, api)
	}
	return ctrl.Result{}, nil
}

// podRevision identifies what the pods read from Secrets: the configuration and, when
// TLS is on, the certificates, Memcached's client certificate among them. A change of
// any rolls the pods.
func (s *scope) podRevision() string {
	if s.tlsRevision == "" && s.memcachedMTLSRevision == "" {
		return s.configRevision
	}
	parts := map[string]string{"config": s.configRevision, "tls": s.tlsRevision}
	if s.memcachedMTLSRevision != "" {
		parts["mtls"] = s.memcachedMTLSRevision
	}
	return deploy.Hash(parts)
}

// markRollout marks step from the Deployment's rollout (rolloutVerdict).
func markRollout(s *scope, step lc.Type, dep *appsv1.Deployment) {
	s.round.Apply(step, rolloutVerdict(dep, s.waitingFor(step)))
}

// replaceTemplate replaces a pod template the operator owns (replace) when the digest
// desired records (deploy.TemplateAnnotation) differs from the one recorded on obj, and
// records the new one.
func replaceTemplate(obj, desired *metav1.ObjectMeta, replace func()) {
	digest := desired.Annotations[deploy.TemplateAnnotation]
	if obj.Annotations[deploy.TemplateAnnotation] != digest {
		replace()
		metav1.SetMetaDataAnnotation(obj, deploy.TemplateAnnotation, digest)
	}
}

// gathered is what this round builds the KeystoneAPI's objects from (deploy.Gathered);
// selector is the existing Deployment's, nil when there is none.
func (s *scope) gathered(selector *metav1.LabelSelector) deploy.Gathered {
	return deploy.Gathered{API: s.api, PodRevision: s.podRevision(), DBSyncHash: s.dbSyncHash, Selector: selector,
		Topology: s.topology, MemcachedMTLSSecret: s.memcachedMTLSSecret, CredentialKeys: s.credentialKeys}
}

// deadlineExceeded returns the message of a Progressing=False/ProgressDeadlineExceeded
// condition, or "".
func deadlineExceeded(dep *appsv1.Deployment) string {
	for _, c := range dep.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse && c.Reason == "ProgressDeadlineExceeded" {
			return c.Message
		}
	}
	return ""
}

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
