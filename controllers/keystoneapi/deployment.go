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
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// reconcileDeployment marks DeploymentReady from the Deployment's rollout and records
// status.readyCount. It rolls out once db-sync and the steps before it are True, while
// bootstrap runs (unneeded). While a step it needs is not True the Deployment keeps
// its pod template (its pods keep serving) and its readiness is still reported; a change
// of replicas is applied all the same: scaling needs nothing of the steps before.
func (r *Reconciler) reconcileDeployment(ctx context.Context, s *scope) (ctrl.Result, error) {
	step := keystonev1.KeystoneAPIDeploymentReady
	dep, err := r.existingDeployment(ctx, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	if s.acting(step) {
		// Pods are not rolled onto networks that do not exist (keystone-operator checks
		// the same before its Deployment); NetworkAttachmentsReady, after this step,
		// reports the pods' addresses on them.
		missing, err := r.missingNetworks(ctx, s.api)
		if err != nil {
			return ctrl.Result{}, err
		}
		if len(missing) > 0 {
			s.round.Apply(step, attachmentsMissingVerdict(missing))
			return ctrl.Result{RequeueAfter: NetworkRecheckInterval}, nil
		}
		desired, err := s.in.Deployment()
		if err != nil {
			return ctrl.Result{}, err
		}
		if dep, err = r.writeDeployment(ctx, s.api, dep, desired, true); err != nil {
			return ctrl.Result{}, err
		}
	} else if dep != nil {
		scaled := dep.DeepCopy()
		scaled.Spec.Replicas = deploy.Replicas(s.api)
		if dep, err = r.writeDeployment(ctx, s.api, dep, scaled, false); err != nil {
			return ctrl.Result{}, err
		}
	}
	s.deployment = dep
	if dep == nil {
		return ctrl.Result{}, nil
	}
	s.api.Status.ReadyCount = dep.Status.ReadyReplicas
	markRollout(s, step, dep)
	return ctrl.Result{}, nil
}

// writeDeployment makes the Deployment hold desired: created when existing is nil,
// else patched, once, when something differs: its labels (others' kept), replicas,
// selector and, with template, its pod template when desired's digest
// (deploy.TemplateAnnotation) differs from the one recorded. It returns the Deployment
// as written.
func (r *Reconciler) writeDeployment(ctx context.Context, api *keystonev1.KeystoneAPI, existing, desired *appsv1.Deployment, template bool) (*appsv1.Deployment, error) {
	if existing == nil {
		if err := controllerutil.SetControllerReference(api, desired, r.Scheme()); err != nil {
			return nil, err
		}
		if err := r.Create(ctx, desired); err != nil {
			return nil, fmt.Errorf("creating deployment %s: %w", desired.Name, err)
		}
		return desired, nil
	}
	dep := existing.DeepCopy()
	dep.Labels = deploy.MergeLabels(dep.Labels, desired.Labels)
	dep.Spec.Replicas = desired.Spec.Replicas
	dep.Spec.Selector = desired.Spec.Selector
	if template {
		replaceTemplate(&dep.ObjectMeta, &desired.ObjectMeta, func() { dep.Spec.Template = desired.Spec.Template })
		if err := controllerutil.SetControllerReference(api, dep, r.Scheme()); err != nil {
			return nil, err
		}
	}
	if equality.Semantic.DeepEqual(dep, existing) {
		return existing, nil
	}
	if err := r.Patch(ctx, dep, client.MergeFrom(existing)); err != nil {
		return nil, fmt.Errorf("writing deployment %s: %w", dep.Name, err)
	}
	return dep, nil
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
