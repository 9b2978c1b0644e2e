package keystoneservice

import (
	"context"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// A KeystoneService refused a service or a user that another KeystoneService holds (a
// service of its type and name, one of its type under another name, a user of its name)
// writes nothing and waits: it goes on once that one lets go. When the holder is in
// this cluster its letting go is seen here, and every refused KeystoneService is woken
// then (wakeRefused), not at regionWatch's next look, which stays for other clusters.

// refusedIndex indexes the KeystoneServices whose service or user is refused as held by
// another (KeystoneServiceReady or ServiceUserReady False, InvalidInput) under
// refusedKey; the others are not indexed.
const (
	refusedIndex = "keystoneservice.refused"
	refusedKey   = "refused"
)

// refusedOf is refusedIndex's function.
func refusedOf(o client.Object) []string {
	conditions := o.(*keystonev1.KeystoneService).Status.Conditions
	for _, step := range []lc.Type{keystonev1.KeystoneServiceServiceReady, keystonev1.KeystoneServiceUserReady} {
		if c := conditions.Get(step); c != nil && c.Status == corev1.ConditionFalse && c.Reason == condition.InvalidInput.Name {
			return []string{refusedKey}
		}
	}
	return nil
}

// wakeRefused wakes every refused KeystoneService (refusedIndex), of any namespace, when
// a KeystoneService let go of a service or user: when it is gone (its finalizer comes
// off after its deregistration), when its service's ID changed (after a change of
// serviceType or serviceName, the previous service is deleted first), and when its
// recorded user changed (after a change of serviceUser, the previous user is removed
// first). Refusals are few, and a woken one that still waits writes nothing.
func (r *Reconciler) wakeRefused() handler.TypedEventHandler[client.Object, reconcile.Request] {
	return handler.TypedFuncs[client.Object, reconcile.Request]{
		DeleteFunc: func(ctx context.Context, e event.TypedDeleteEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			r.enqueueRefused(ctx, e.Object, q)
		},
		UpdateFunc: func(ctx context.Context, e event.TypedUpdateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			before, ok1 := e.ObjectOld.(*keystonev1.KeystoneService)
			after, ok2 := e.ObjectNew.(*keystonev1.KeystoneService)
			if !ok1 || !ok2 {
				return
			}
			serviceMoved := before.Status.ServiceID != "" && before.Status.ServiceID != after.Status.ServiceID
			userMoved := before.Annotations[UserAnnotation] != "" && before.Annotations[UserAnnotation] != after.Annotations[UserAnnotation]
			if serviceMoved || userMoved {
				r.enqueueRefused(ctx, before, q)
			}
		},
	}
}

// enqueueRefused adds to q the refused KeystoneServices other than released (from the cache).
func (r *Reconciler) enqueueRefused(ctx context.Context, released client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	var list keystonev1.KeystoneServiceList
	if err := r.List(ctx, &list, client.MatchingFields{refusedIndex: refusedKey}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing the refused KeystoneServices to wake", "released", client.ObjectKeyFromObject(released))
		return
	}
	for i := range list.Items {
		if list.Items[i].UID != released.GetUID() {
			q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
}
