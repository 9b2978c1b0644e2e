package keystoneservice

import (
	"context"
	"sync"
	"time"

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
// wait on, the keys of Keystone's records that regionWatch compares: identity.TypeRecord
// of their service type (KeystoneServiceReady False, InvalidInput), identity.UserRecord
// of their serviceUser (ServiceUserReady False, InvalidInput). The others are not
// indexed.
const refusedIndex = "keystoneservice.refused"

// refusedOf is refusedIndex's function.
func refusedOf(o client.Object) []string {
	svc := o.(*keystonev1.KeystoneService)
	var keys []string
	if refused(svc, keystonev1.KeystoneServiceServiceReady) {
		keys = append(keys, identity.TypeRecord(svc.Spec.ServiceType))
	}
	if refused(svc, keystonev1.KeystoneServiceUserReady) {
		keys = append(keys, identity.UserRecord(svc.Spec.ServiceUser))
	}
	return keys
}

// refused tells whether svc's step is refused for what another holds (False,
// InvalidInput).
func refused(svc *keystonev1.KeystoneService, step lc.Type) bool {
	c := svc.Status.Conditions.Get(step)
	return c != nil && c.Status == corev1.ConditionFalse && c.Reason == condition.InvalidInput.Name
}

const (
	// wakeEvery is how often, at most, the KeystoneServices waiting on one key are woken:
	// a namespace that registers and deletes in a loop wakes the others refused for
	// the same type or user no more often than that.
	wakeEvery = 5 * time.Second
	// releasedFor is how long a release is remembered for a refusal written after it
	// (its round read Keystone while the holder still held it).
	releasedFor = time.Minute
)

// waking is wakeRefused's memory.
type waking struct {
	r   *Reconciler
	now func() time.Time

	mu sync.Mutex
	// moved is, by UID, the service type a KeystoneService registered and left in its
	// spec, until its service's ID changes (the previous service is deleted then).
	moved map[types.UID]string
	// woken is, by key, when its waiters were last woken (or will be: wakeEvery).
	woken map[string]time.Time
}

// wakeRefused wakes the KeystoneServices of any namespace refused for what one
// KeystoneService let go (refusedIndex), at most every wakeEvery per key:
//   - when it is gone (its finalizer comes off after its deregistration): those waiting
//     on its service type's group, had it a service, and on its user, had it one;
//   - when its recorded user changed (after a change of serviceUser the previous user is
//     removed first): those waiting on the previous user, had it one;
//   - when its service's ID changed after a change of serviceType (the previous service
//     is deleted first): those waiting on the group of the type it registered, which
//     is remembered from the spec's change (moved) until then;
//   - and one refused, within releasedFor, for what was let go before its refusal was
//     written (its round read Keystone before).
//
// A change of serviceName alone keeps the type held. A move the operator did not see
// (it restarted in between), a KeystoneService deregistered because its KeystoneAPI
// went, and a holder in another cluster are regionWatch's.
func (r *Reconciler) wakeRefused() handler.TypedEventHandler[client.Object, reconcile.Request] {
	return newWaking(r).handler()
}

func newWaking(r *Reconciler) *waking {
	return &waking{r: r, now: time.Now, moved: map[types.UID]string{}, woken: map[string]time.Time{}}
}

// handler is wakeRefused's.
func (w *waking) handler() handler.TypedEventHandler[client.Object, reconcile.Request] {
	return handler.TypedFuncs[client.Object, reconcile.Request]{
		DeleteFunc: func(ctx context.Context, e event.TypedDeleteEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if svc, ok := e.Object.(*keystonev1.KeystoneService); ok {
				w.wake(ctx, svc, w.released(svc), q)
			}
		},
		UpdateFunc: func(ctx context.Context, e event.TypedUpdateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			before, ok1 := e.ObjectOld.(*keystonev1.KeystoneService)
			after, ok2 := e.ObjectNew.(*keystonev1.KeystoneService)
			if ok1 && ok2 {
				w.wake(ctx, after, w.moves(before, after), q)
				w.wakeLate(before, after, q)
			}
		},
	}
}

// released is what svc, gone, held: the group of its service's type (of the type it
// registered, when its spec left it since), and its recorded user unless it was refused
// it.
func (w *waking) released(svc *keystonev1.KeystoneService) []string {
	w.mu.Lock()
	from, moved := w.moved[svc.UID]
	delete(w.moved, svc.UID)
	w.mu.Unlock()
	var keys []string
	switch {
	case moved:
		keys = append(keys, identity.TypeRecord(from))
	case svc.Status.ServiceID != "":
		keys = append(keys, identity.TypeRecord(svc.Spec.ServiceType))
	}
	if user := svc.Annotations[UserAnnotation]; user != "" && !refused(svc, keystonev1.KeystoneServiceUserReady) {
		keys = append(keys, identity.UserRecord(user))
	}
	return keys
}

// moves is what an update of a KeystoneService from before to after let go, and
// remembers the type it registered when its spec leaves it.
func (w *waking) moves(before, after *keystonev1.KeystoneService) []string {
	var keys []string
	if from := before.Annotations[UserAnnotation]; from != "" && from != after.Annotations[UserAnnotation] &&
		!refused(before, keystonev1.KeystoneServiceUserReady) {
		keys = append(keys, identity.UserRecord(from))
	}
	if before.Status.ServiceID == "" ||
		before.Spec.ServiceType == after.Spec.ServiceType && before.Status.ServiceID == after.Status.ServiceID {
		// Nothing registered, or neither its type nor its service moved: most updates.
		return keys
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, known := w.moved[after.UID]; !known &&
		identity.TypeRecord(before.Spec.ServiceType) != identity.TypeRecord(after.Spec.ServiceType) {
		w.moved[after.UID] = before.Spec.ServiceType
	}
	if from, known := w.moved[after.UID]; known && before.Status.ServiceID != after.Status.ServiceID {
		delete(w.moved, after.UID)
		if identity.TypeRecord(from) != identity.TypeRecord(after.Spec.ServiceType) {
			keys = append(keys, identity.TypeRecord(from))
		}
	}
	return keys
}

// wake adds to q, at the time wakeEvery allows for each key, the KeystoneServices but
// released that refusedIndex holds under keys (from the cache).
func (w *waking) wake(ctx context.Context, released *keystonev1.KeystoneService, keys []string,
	q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	now := w.now()
	for _, key := range keys {
		w.mu.Lock()
		w.forget(now)
		last, seen := w.woken[key]
		if seen && last.After(now) {
			// A wake of this key is coming, after this release: it covers it.
			w.mu.Unlock()
			continue
		}
		at := now
		if seen && last.Add(wakeEvery).After(now) {
			at = last.Add(wakeEvery)
		}
		w.woken[key] = at
		w.mu.Unlock()
		var list keystonev1.KeystoneServiceList
		if err := w.r.List(ctx, &list, client.MatchingFields{refusedIndex: key}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing the refused KeystoneServices to wake", "released", client.ObjectKeyFromObject(released))
			continue
		}
		for i := range list.Items {
			if list.Items[i].UID != released.UID {
				q.AddAfter(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])}, at.Sub(now))
			}
		}
	}
}

// wakeLate wakes a KeystoneService refused, by this update, for a key released within
// releasedFor: its round read Keystone before the release, and wrote its refusal after
// the wake. It is woken when the key's wake is due.
func (w *waking) wakeLate(before, after *keystonev1.KeystoneService, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	keys := refusedOf(after)
	if len(keys) == 0 {
		return // not refused: most updates
	}
	had := sets.New(refusedOf(before)...)
	now := w.now()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, key := range keys {
		if last, seen := w.woken[key]; seen && !had.Has(key) && now.Sub(last) < releasedFor {
			q.AddAfter(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(after)}, max(last.Sub(now), 0))
			return
		}
	}
}

// forget drops the keys woken more than releasedFor before now; w.mu is held.
func (w *waking) forget(now time.Time) {
	for key, last := range w.woken {
		if now.Sub(last) > releasedFor {
			delete(w.woken, key)
		}
	}
}
