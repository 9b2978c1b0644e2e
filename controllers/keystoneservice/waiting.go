package keystoneservice

import (
	"context"
	"sync"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
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
// this cluster its letting go is seen here, and the KeystoneServices refused for what it
// held are woken then (wakeRefused), not at regionWatch's next look, which stays for
// other clusters.

// refusedIndex indexes the KeystoneServices refused for what another holds by what they
// wait on: typeKey of their service type's group (KeystoneServiceReady False,
// InvalidInput), userKey of their serviceUser (ServiceUserReady False, InvalidInput).
// The others are not indexed.
const refusedIndex = "keystoneservice.refused"

// typeKey and userKey are refusedIndex's keys.
func typeKey(serviceType string) string { return "type/" + identity.ServiceTypeGroup(serviceType) }
func userKey(user string) string        { return "user/" + user }

// refusedOf is refusedIndex's function.
func refusedOf(o client.Object) []string {
	svc := o.(*keystonev1.KeystoneService)
	refused := func(step lc.Type) bool {
		c := svc.Status.Conditions.Get(step)
		return c != nil && c.Status == corev1.ConditionFalse && c.Reason == condition.InvalidInput.Name
	}
	var keys []string
	if refused(keystonev1.KeystoneServiceServiceReady) {
		keys = append(keys, typeKey(svc.Spec.ServiceType))
	}
	if refused(keystonev1.KeystoneServiceUserReady) {
		keys = append(keys, userKey(svc.Spec.ServiceUser))
	}
	return keys
}

// wakeRefused wakes the KeystoneServices of any namespace refused for what one
// KeystoneService let go (refusedIndex):
//   - when it is gone (its finalizer comes off after its deregistration): those waiting
//     on its service type's group or on its users;
//   - when its recorded user changed (after a change of serviceUser the previous user is
//     removed first): those waiting on the previous user;
//   - when its service's ID changed after a change of serviceType (the previous service
//     is deleted first): those waiting on the previous type's group, which the
//     handler remembers from the spec's change (moved) until then. After a restart in
//     between, regionWatch's next look wakes them.
//
// A change of serviceName alone keeps the type, which the new service holds.
func (r *Reconciler) wakeRefused() handler.TypedEventHandler[client.Object, reconcile.Request] {
	var mu sync.Mutex
	moved := map[types.UID]sets.Set[string]{} // by UID: the type keys a KeystoneService moved from
	take := func(uid types.UID) []string {
		mu.Lock()
		defer mu.Unlock()
		from := moved[uid]
		delete(moved, uid)
		return sets.List(from)
	}
	return handler.TypedFuncs[client.Object, reconcile.Request]{
		DeleteFunc: func(ctx context.Context, e event.TypedDeleteEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			svc, ok := e.Object.(*keystonev1.KeystoneService)
			if !ok {
				return
			}
			keys := append(take(svc.UID), typeKey(svc.Spec.ServiceType))
			for _, user := range usersNamed(svc) {
				keys = append(keys, userKey(user))
			}
			r.enqueueRefused(ctx, svc, keys, q)
		},
		UpdateFunc: func(ctx context.Context, e event.TypedUpdateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			before, ok1 := e.ObjectOld.(*keystonev1.KeystoneService)
			after, ok2 := e.ObjectNew.(*keystonev1.KeystoneService)
			if !ok1 || !ok2 {
				return
			}
			if from, to := typeKey(before.Spec.ServiceType), typeKey(after.Spec.ServiceType); from != to && before.Status.ServiceID != "" {
				mu.Lock()
				if moved[after.UID] == nil {
					moved[after.UID] = sets.New[string]()
				}
				moved[after.UID].Insert(from)
				mu.Unlock()
			}
			var keys []string
			if from := before.Annotations[UserAnnotation]; from != "" && from != after.Annotations[UserAnnotation] {
				keys = append(keys, userKey(from))
			}
			if before.Status.ServiceID != "" && before.Status.ServiceID != after.Status.ServiceID {
				keys = append(keys, take(after.UID)...)
			}
			if len(keys) > 0 {
				r.enqueueRefused(ctx, after, keys, q)
			}
		},
	}
}

// enqueueRefused adds to q the KeystoneServices but released that refusedIndex holds
// under keys (from the cache).
func (r *Reconciler) enqueueRefused(ctx context.Context, released *keystonev1.KeystoneService, keys []string,
	q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	woken := sets.New[types.NamespacedName]()
	for _, key := range keys {
		var list keystonev1.KeystoneServiceList
		if err := r.List(ctx, &list, client.MatchingFields{refusedIndex: key}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing the refused KeystoneServices to wake", "released", client.ObjectKeyFromObject(released))
			continue
		}
		for i := range list.Items {
			if list.Items[i].UID != released.UID {
				woken.Insert(client.ObjectKeyFromObject(&list.Items[i]))
			}
		}
	}
	for key := range woken {
		q.Add(reconcile.Request{NamespacedName: key})
	}
}
