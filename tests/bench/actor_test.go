//go:build bench

package bench

import (
	"context"
	"github.com/keystone-stepwise/keystone-operator/internal/testutil"

	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	mariadbv1 "github.com/openstack-k8s-operators/mariadb-operator/api/v1beta1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// actorLabel on a namespace lets the actor play the dependencies there.
const actorLabel = "bench/actor"

// actor plays mariadb-operator, the Job and Deployment controllers and the kubelet:
// each dependency is made ready the instant it appears, in namespaces labelled actorLabel.
type actor struct{ client.Client }

func (a *actor) active(ctx context.Context, ns string) bool {
	n := &corev1.Namespace{}
	return a.Get(ctx, client.ObjectKey{Name: ns}, n) == nil && n.Labels[actorLabel] == "on"
}

func setup(mgr ctrl.Manager) error {
	a := &actor{mgr.GetClient()}
	for _, obj := range []client.Object{&mariadbv1.MariaDBDatabase{}, &mariadbv1.MariaDBAccount{}, &batchv1.Job{}, &appsv1.Deployment{}} {
		if err := ctrl.NewControllerManagedBy(mgr).For(obj).Named("actor-" + obj.GetObjectKind().GroupVersionKind().Kind + kindOf(obj)).
			Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
				return reconcile.Result{}, a.play(ctx, req, obj.DeepCopyObject().(client.Object))
			})); err != nil {
			return err
		}
	}
	return nil
}

func kindOf(obj client.Object) string {
	switch obj.(type) {
	case *mariadbv1.MariaDBDatabase:
		return "db"
	case *mariadbv1.MariaDBAccount:
		return "account"
	case *batchv1.Job:
		return "job"
	default:
		return "deployment"
	}
}

func (a *actor) play(ctx context.Context, req reconcile.Request, obj client.Object) error {
	if !a.active(ctx, req.Namespace) {
		return nil
	}
	if err := a.Get(ctx, req.NamespacedName, obj); err != nil {
		return client.IgnoreNotFound(err)
	}
	now := metav1.Now()
	switch o := obj.(type) {
	case *mariadbv1.MariaDBDatabase:
		if o.Status.Conditions.IsTrue(lc.ReadyCondition) {
			return nil
		}
		o.Status.Conditions = testutil.ReadyConditions()
	case *mariadbv1.MariaDBAccount:
		if o.Status.Conditions.IsTrue(lc.ReadyCondition) {
			return nil
		}
		o.Status.Conditions = testutil.ReadyConditions()
	case *batchv1.Job:
		if o.Status.Succeeded > 0 {
			return nil
		}
		o.Status = batchv1.JobStatus{StartTime: &now, CompletionTime: &now, Succeeded: 1, Conditions: []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now}}}
	case *appsv1.Deployment:
		want := *o.Spec.Replicas
		if o.Status.ObservedGeneration == o.Generation && o.Status.ReadyReplicas == want && o.Status.UpdatedReplicas == want {
			return nil
		}
		o.Status = appsv1.DeploymentStatus{ObservedGeneration: o.Generation, Replicas: want, ReadyReplicas: want,
			UpdatedReplicas: want, AvailableReplicas: want}
	}
	return client.IgnoreNotFound(a.Status().Update(ctx, obj))
}
