package reconciler

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestThrottled(t *testing.T) {
	g := NewWithT(t)
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	api := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "keystone"}}
	wake := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request { return []reconcile.Request{api} })
	h := Throttled(wake, 400*time.Millisecond)
	created := event.CreateEvent{Object: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "r"}}}
	reconciled := func() {
		item, _ := q.Get()
		q.Done(item)
	}

	h.Create(context.Background(), created, q)
	g.Expect(q.Len()).To(Equal(1), "the first event wakes it at once")
	reconciled()
	for i := 0; i < 50; i++ {
		h.Create(context.Background(), created, q)
	}
	g.Expect(q.Len()).To(BeZero(), "a burst within the window waits for its end")
	g.Eventually(q.Len).WithTimeout(2*time.Second).Should(Equal(1), "and wakes it once")
	reconciled()
	g.Consistently(q.Len).WithTimeout(600*time.Millisecond).Should(BeZero(), "nothing more for that burst")
	h.Create(context.Background(), created, q)
	g.Expect(q.Len()).To(Equal(1), "the window over, an event wakes it at once again")
}

// TestThrottleForgets: an object's entry goes once its window has ended (swept at most
// once per window), so a throttle does not grow with every object it ever woke.
func TestThrottleForgets(t *testing.T) {
	now := time.Unix(1000, 0)
	th := &throttle{every: 5 * time.Second, now: func() time.Time { return now }, next: map[reconcile.Request]time.Time{}}
	q := throttled{TypedRateLimitingInterface: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]()),
		throttle: th}
	defer q.ShutDown()
	for i := range 100 {
		q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: fmt.Sprint(i)}})
	}
	if len(th.next) != 100 {
		t.Fatalf("%d entries, want 100", len(th.next))
	}
	now = now.Add(6 * time.Second)
	q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "new"}})
	if len(th.next) != 1 {
		t.Errorf("%d entries after every window ended, want 1 (the new one)", len(th.next))
	}
}

// listingReader is a client.Reader whose List returns items of ConfigMaps and records
// the options it was given.
type listingReader struct {
	client.Reader
	items []corev1.ConfigMap
	opts  *client.ListOptions
}

func (r *listingReader) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	r.opts = (&client.ListOptions{}).ApplyOptions(opts)
	list.(*corev1.ConfigMapList).Items = r.items
	return nil
}

// TestEnqueueInNamespace: the objects of the event's namespace are woken, listed from
// the cache without deep copies (only their names are read), a filter's options kept
// beside it; a filter answering nil wakes none and lists nothing.
func TestEnqueueInNamespace(t *testing.T) {
	g := NewWithT(t)
	r := &listingReader{items: []corev1.ConfigMap{{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"}}}}
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	created := event.CreateEvent{Object: &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s"}}}

	EnqueueInNamespace(r, &corev1.ConfigMapList{}, nil).Create(context.Background(), created, q)
	g.Expect(q.Len()).To(Equal(2))
	g.Expect(r.opts.Namespace).To(Equal("ns"))
	g.Expect(r.opts.UnsafeDisableDeepCopy).To(HaveValue(BeTrue()), "names only: no deep copies")

	r.opts = nil
	byField := func(client.Object) []client.ListOption { return []client.ListOption{client.MatchingFields{"f": "v"}} }
	EnqueueInNamespace(r, &corev1.ConfigMapList{}, byField).Create(context.Background(), created, q)
	g.Expect(r.opts.FieldSelector).NotTo(BeNil(), "the filter's options are kept")
	g.Expect(r.opts.FieldSelector.String()).To(Equal("f=v"))
	g.Expect(r.opts.UnsafeDisableDeepCopy).To(HaveValue(BeTrue()), "and with them, no copies")

	r.opts = nil
	fresh := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer fresh.ShutDown()
	none := func(client.Object) []client.ListOption { return nil }
	EnqueueInNamespace(r, &corev1.ConfigMapList{}, none).Create(context.Background(), created, fresh)
	g.Expect(r.opts).To(BeNil(), "nothing listed")
	g.Expect(fresh.Len()).To(BeZero(), "nothing woken")
}
