package testactor

import (
	"context"

	"github.com/keystone-stepwise/keystone-operator/tests/support/testutil"
	rabbitmqv1 "github.com/openstack-k8s-operators/infra-operator/apis/rabbitmq/v1beta1"
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

// Label on a namespace, with the value "on", lets the actor play there.
const Label = "keystone-stepwise.test/actor"

type actor struct{ client.Client }

// Setup registers the actor's controllers with mgr.
func Setup(mgr ctrl.Manager) error {
	a := &actor{mgr.GetClient()}
	for name, obj := range map[string]client.Object{
		"db": &mariadbv1.MariaDBDatabase{}, "account": &mariadbv1.MariaDBAccount{}, "job": &batchv1.Job{}, "deployment": &appsv1.Deployment{},
		"transporturl": &rabbitmqv1.TransportURL{},
	} {
		if err := ctrl.NewControllerManagedBy(mgr).For(obj).Named("actor-" + name).
			Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
				return reconcile.Result{}, a.play(ctx, req, obj.DeepCopyObject().(client.Object))
			})); err != nil {
			return err
		}
	}
	return nil
}

func (a *actor) active(ctx context.Context, ns string) bool {
	n := &corev1.Namespace{}
	return a.Get(ctx, client.ObjectKey{Name: ns}, n) == nil && n.Labels[Label] == "on"
}

func (a *actor) play(ctx context.Context, req reconcile.Request, obj client.Object) error {
	if !a.active(ctx, req.Namespace) {
		return nil
	}
	if err := a.Get(ctx, req.NamespacedName, obj); err != nil {
		return client.IgnoreNotFound(err)
	}
	changed, err := a.makeReady(ctx, obj)
	if err != nil || !changed {
		return err
	}
	return client.IgnoreNotFound(a.Status().Update(ctx, obj))
}

// makeReady sets obj's status to ready; false when it was already.
func (a *actor) makeReady(ctx context.Context, obj client.Object) (bool, error) {
	now := metav1.Now()
	switch o := obj.(type) {
	case *mariadbv1.MariaDBDatabase:
		// mariadb-operator's conditions: keystone-operator waits for the kind's own.
		return setReady(&o.Status.Conditions, mariadbv1.MariaDBServerReadyCondition, mariadbv1.MariaDBDatabaseReadyCondition), nil
	case *mariadbv1.MariaDBAccount:
		return setReady(&o.Status.Conditions, mariadbv1.MariaDBServerReadyCondition, mariadbv1.MariaDBAccountReadyCondition), nil
	case *rabbitmqv1.TransportURL:
		if !setReady(&o.Status.Conditions) {
			return false, nil
		}
		return true, a.transportURLSecret(ctx, o)
	case *batchv1.Job:
		if o.Status.Succeeded > 0 {
			return false, nil
		}
		o.Status = batchv1.JobStatus{StartTime: &now, CompletionTime: &now, Succeeded: 1, Conditions: []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now}}}
	case *appsv1.Deployment:
		want := *o.Spec.Replicas
		if o.Status.ObservedGeneration == o.Generation && o.Status.ReadyReplicas == want && o.Status.UpdatedReplicas == want {
			return false, nil
		}
		o.Status = appsv1.DeploymentStatus{ObservedGeneration: o.Generation, Replicas: want, ReadyReplicas: want,
			UpdatedReplicas: want, AvailableReplicas: want}
	}
	return true, nil
}

// setReady makes conditions Ready, and the kind's own conditions kinds True beside;
// false when they were already.
func setReady(conditions *lc.Conditions, kinds ...lc.Type) bool {
	if conditions.IsTrue(lc.ReadyCondition) {
		return false
	}
	*conditions = testutil.ReadyConditions()
	for _, t := range kinds {
		c := lc.TrueCondition(t, "Setup complete")
		c.LastTransitionTime = metav1.Now()
		*conditions = append(*conditions, *c)
	}
	return true
}

// transportURLSecret writes the Secret infra-operator writes for tu and names it in
// its status.
func (a *actor) transportURLSecret(ctx context.Context, tu *rabbitmqv1.TransportURL) error {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "rabbitmq-transport-url-" + tu.Name, Namespace: tu.Namespace},
		Data: map[string][]byte{"transport_url": []byte("rabbit://user:password@" + tu.Spec.RabbitmqClusterName + ":5672/?ssl=0")}}
	if err := a.Create(ctx, secret); client.IgnoreAlreadyExists(err) != nil {
		return err
	}
	tu.Status.SecretName = secret.Name
	return nil
}
