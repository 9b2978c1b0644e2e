package reconciler

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// EnqueueInNamespace wakes the objects of list's kind in an event object's namespace,
// those matching filter(object) when filter is set (nil from filter: none), through
// RequestsFor: a registration's Ready changing wakes its namespace's KeystoneAPI, which
// holds its status and the finalizers of the registrations that hold it.
func EnqueueInNamespace(c client.Reader, list client.ObjectList, filter func(client.Object) []client.ListOption) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
		opts := []client.ListOption{client.InNamespace(o.GetNamespace())}
		if filter != nil {
			more := filter(o)
			if more == nil {
				return nil
			}
			opts = append(opts, more...)
		}
		return RequestsFor(ctx, c, list, opts...)
	})
}

// RequestsFor is a request for each object of list's kind that opts select, for a watch
// event; none when they cannot be listed (logged). Only their names are read, so a
// cache lists them without deep copies (the items share their maps and slices with the
// cache, and are never changed).
func RequestsFor(ctx context.Context, c client.Reader, list client.ObjectList, opts ...client.ListOption) []reconcile.Request {
	l := list.DeepCopyObject().(client.ObjectList)
	if err := c.List(ctx, l, append(slices.Clip(opts), client.UnsafeDisableDeepCopy)...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing objects for a watch event", "list", fmt.Sprintf("%T", list))
		return nil
	}
	items, err := apimeta.ExtractList(l)
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "reading a list for a watch event", "list", fmt.Sprintf("%T", list))
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(items))
	for _, item := range items {
		if obj, ok := item.(client.Object); ok {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)})
		}
	}
	return reqs
}

// Throttled is h, waking each object it names at most once per every: the first event
// wakes it at once, those that follow within every wake it once more at the end of that
// window. A burst of events (a thousand registrations turning Ready) costs a reconcile
// per window, not one each, and a single event is seen without delay.
func Throttled(h handler.EventHandler, every time.Duration) handler.EventHandler {
	t := &throttle{every: every, now: time.Now, next: map[reconcile.Request]time.Time{}}
	queue := func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) throttled {
		return throttled{TypedRateLimitingInterface: q, throttle: t}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Create(ctx, e, queue(q))
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Update(ctx, e, queue(q))
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Delete(ctx, e, queue(q))
		},
		GenericFunc: func(ctx context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Generic(ctx, e, queue(q))
		},
	}
}

// throttle holds, per object, when its current window ends; entries whose window
// ended are swept at most once per window, so that objects deleted long ago leave
// nothing behind.
type throttle struct {
	every     time.Duration
	now       func() time.Time
	mu        sync.Mutex
	next      map[reconcile.Request]time.Time
	lastSweep time.Time
}

// sweepLocked drops the entries whose window has ended, at most once per window. t.mu
// is held.
func (t *throttle) sweepLocked(now time.Time) {
	if now.Sub(t.lastSweep) < t.every {
		return
	}
	t.lastSweep = now
	for item, end := range t.next {
		if !now.Before(end) {
			delete(t.next, item)
		}
	}
}

// throttled is a work queue whose Add goes through a throttle.
type throttled struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	throttle *throttle
}

// Add queues item at once when its window has ended (and starts a new one), else at
// the end of its window (a wake already waiting for it keeps its time).
func (q throttled) Add(item reconcile.Request) {
	t := q.throttle
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	t.sweepLocked(now)
	if end, ok := t.next[item]; ok && now.Before(end) {
		q.AddAfter(item, end.Sub(now))
		return
	}
	t.next[item] = now.Add(t.every)
	q.TypedRateLimitingInterface.Add(item)
}
