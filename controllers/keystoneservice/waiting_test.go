package keystoneservice

import (
	"context"
	"sort"
	"testing"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/controllers/registration"
	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// TestRefusedIndex: refusedIndex holds a KeystoneService refused a service or a user
// another holds (InvalidInput on KeystoneServiceReady or ServiceUserReady) under what it
// waits on (its type's group, its user), and no other: not one Ready, waiting for
// something else, or refused by its KeystoneAPI's policy.
func TestRefusedIndex(t *testing.T) {
	g := NewWithT(t)
	with := func(conditions ...lc.Condition) *keystonev1.KeystoneService {
		return &keystonev1.KeystoneService{Spec: keystonev1.KeystoneServiceSpec{ServiceType: "volumev3", ServiceUser: "cinder"},
			Status: keystonev1.KeystoneServiceStatus{Conditions: conditions}}
	}
	state := func(step lc.Type, status corev1.ConditionStatus, reason lc.Reason) lc.Condition {
		return lc.Condition{Type: step, Status: status, Reason: reason}
	}
	g.Expect(refusedOf(with(state(keystonev1.KeystoneServiceServiceReady, corev1.ConditionFalse, "InvalidInput")))).
		To(Equal([]string{"type/block-storage"}), "a service another holds: its type's group (volumev3 is an alias of block-storage)")
	g.Expect(refusedOf(with(state(keystonev1.KeystoneServiceServiceReady, corev1.ConditionTrue, "Ready"),
		state(keystonev1.KeystoneServiceUserReady, corev1.ConditionFalse, "InvalidInput")))).
		To(Equal([]string{"user/cinder"}), "a user another holds")
	for what, svc := range map[string]*keystonev1.KeystoneService{
		"no status yet":        with(),
		"Ready":                with(state(keystonev1.KeystoneServiceServiceReady, corev1.ConditionTrue, "Ready")),
		"Keystone unreachable": with(state(keystonev1.KeystoneServiceServiceReady, corev1.ConditionFalse, "ServiceUnavailable")),
		"a password conflict":  with(state(keystonev1.KeystoneServiceUserReady, corev1.ConditionFalse, "PasswordConflict")),
		"the policy's refusal": with(state(keystonev1.KeystoneServiceInputReady, corev1.ConditionFalse, "NotAllowed")),
	} {
		g.Expect(refusedOf(svc)).To(BeEmpty(), what)
	}
}

// eventHandler is a watch's handler of KeystoneServices, and queue what it is given.
type (
	eventHandler = handler.TypedEventHandler[client.Object, reconcile.Request]
	queue        = workqueue.TypedRateLimitingInterface[reconcile.Request]
)

// wakingFixture is a waking over a fake client holding KeystoneServices refused for
// what others hold, at a clock the test moves.
type wakingFixture struct {
	w   *waking
	now time.Time
}

func newWakingFixture(t *testing.T) *wakingFixture {
	scheme := runtime.NewScheme()
	NewWithT(t).Expect(keystonev1.AddToScheme(scheme)).To(Succeed())
	refused := func(ns, name, serviceType, user string, step lc.Type) *keystonev1.KeystoneService {
		return &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(ns + "/" + name)},
			Spec: keystonev1.KeystoneServiceSpec{ServiceType: serviceType, ServiceUser: user},
			Status: keystonev1.KeystoneServiceStatus{Conditions: lc.Conditions{
				{Type: step, Status: corev1.ConditionFalse, Reason: "InvalidInput"}}}}
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithIndex(&keystonev1.KeystoneService{}, refusedIndex, refusedOf).WithObjects(
		refused("b", "twin", "image", "glance-twin", keystonev1.KeystoneServiceServiceReady),
		refused("b", "intruder", "image-other", "GLANCE", keystonev1.KeystoneServiceUserReady),
		refused("c", "typea", "image-a", "typea", keystonev1.KeystoneServiceServiceReady),
		refused("c", "neutron", "network", "neutron", keystonev1.KeystoneServiceServiceReady),
		refused("c", "nova", "compute", "nova", keystonev1.KeystoneServiceUserReady),
	).Build()
	f := &wakingFixture{w: newWaking(&Reconciler{Base: registration.Base{Client: c}}), now: time.Unix(1e9, 0)}
	f.w.now = func() time.Time { return f.now }
	return f
}

// events gives the events do sends to a fresh handler of the fixture's waking, and
// returns the requests it queued at once, sorted, and how many it queued for later.
func (f *wakingFixture) events(do func(h eventHandler, q queue)) ([]string, int) {
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	counting := &countingQueue{queue: q}
	do(f.w.handler(), counting)
	return drained(q), counting.later
}

// drained empties q and returns what it held, sorted.
func drained(q workqueue.TypedRateLimitingInterface[reconcile.Request]) []string {
	out := []string{}
	for q.Len() > 0 {
		item, _ := q.Get()
		out = append(out, item.String())
		q.Done(item)
	}
	sort.Strings(out)
	return out
}

// countingQueue counts the requests added for later.
type countingQueue struct {
	queue
	later int
}

func (q *countingQueue) AddAfter(item reconcile.Request, d time.Duration) {
	if d > 0 {
		q.later++
	}
	q.queue.AddAfter(item, d)
}

// holder is a KeystoneService of namespace a that registered an image service and the
// user glance.
func holder() *keystonev1.KeystoneService {
	return &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "glance", UID: "a/glance",
		Annotations: map[string]string{UserAnnotation: "glance"}},
		Spec:   keystonev1.KeystoneServiceSpec{ServiceType: "image", ServiceName: "glance", ServiceUser: "glance"},
		Status: keystonev1.KeystoneServiceStatus{ServiceID: "s1"}}
}

func deleted(ctx context.Context, h eventHandler, q queue, svc *keystonev1.KeystoneService) {
	h.Delete(ctx, event.TypedDeleteEvent[client.Object]{Object: svc}, q)
}

func updated(ctx context.Context, h eventHandler, q queue, before, after *keystonev1.KeystoneService) {
	h.Update(ctx, event.TypedUpdateEvent[client.Object]{ObjectOld: before, ObjectNew: after}, q)
}

// TestWakeRefused: a KeystoneService that lets go of what it held wakes those refused for
// it, of any namespace, and no other: when it is gone, those waiting on its type's group
// and its user (of any case); when its service moved to a type of another group, those
// waiting on the type it registered; when its recorded user changed, those waiting on
// the user it left. What it did not hold wakes nobody.
func TestWakeRefused(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()

	woken, _ := newWakingFixture(t).events(func(h eventHandler, q queue) {
		deleted(ctx, h, q, holder())
	})
	g.Expect(woken).To(Equal([]string{"b/intruder", "b/twin"}), "gone: its type's and its user's")

	woken, _ = newWakingFixture(t).events(func(h eventHandler, q queue) {
		never := holder()
		never.Status.ServiceID = ""
		never.Status.Conditions = lc.Conditions{{Type: keystonev1.KeystoneServiceUserReady, Status: corev1.ConditionFalse, Reason: "InvalidInput"}}
		deleted(ctx, h, q, never)
	})
	g.Expect(woken).To(BeEmpty(), "gone without a service, refused its user: it held nothing")

	woken, _ = newWakingFixture(t).events(func(h eventHandler, q queue) {
		moving := holder()
		moving.Spec.ServiceType = "image-a"
		updated(ctx, h, q, holder(), moving)
		g.Expect(q.Len()).To(BeZero(), "a new spec lets go of nothing yet")
		again := moving.DeepCopy()
		again.Spec.ServiceType = "image-b"
		updated(ctx, h, q, moving, again)
		moved := again.DeepCopy()
		moved.Status.ServiceID = "s2"
		updated(ctx, h, q, again, moved)
	})
	g.Expect(woken).To(Equal([]string{"b/twin"}), "its service moved to another type: the type it registered, not one it asked for meanwhile")

	woken, _ = newWakingFixture(t).events(func(h eventHandler, q queue) {
		moving := holder()
		moving.Spec.ServiceType = "image-a"
		updated(ctx, h, q, holder(), moving)
		deleted(ctx, h, q, moving)
	})
	g.Expect(woken).To(Equal([]string{"b/intruder", "b/twin"}), "gone while moving: the type it registered")

	woken, _ = newWakingFixture(t).events(func(h eventHandler, q queue) {
		renamed := holder()
		renamed.Spec.ServiceName = "glance-a"
		renamed.Status.ServiceID = "s2"
		updated(ctx, h, q, holder(), renamed)
	})
	g.Expect(woken).To(BeEmpty(), "another name, the same type: the type is still held")

	woken, _ = newWakingFixture(t).events(func(h eventHandler, q queue) {
		moved := holder()
		moved.Spec.ServiceUser = "glance-a"
		moved.Annotations[UserAnnotation] = "glance-a"
		updated(ctx, h, q, holder(), moved)
	})
	g.Expect(woken).To(Equal([]string{"b/intruder"}), "its recorded user moved: the user it left")
}

// TestWakeRefusedRate: the waiters of one key are woken at most every wakeEvery, however
// often it is released; one refused, within releasedFor, for a key released before its
// refusal was written is woken too.
func TestWakeRefusedRate(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	f := newWakingFixture(t)
	woken, later := f.events(func(h eventHandler, q queue) {
		deleted(ctx, h, q, holder())
		for range 9 {
			f.now = f.now.Add(time.Second / 2)
			deleted(ctx, h, q, holder())
		}
	})
	g.Expect(woken).To(Equal([]string{"b/intruder", "b/twin"}))
	g.Expect(later).To(Equal(2), "nine more releases within 5 s: one more wake of each waiter, due wakeEvery after the first")
	f.now = f.now.Add(time.Second)
	woken, later = f.events(func(h eventHandler, q queue) { deleted(ctx, h, q, holder()) })
	g.Expect(woken).To(BeEmpty())
	g.Expect(later).To(Equal(2), "one after that wake: the next, wakeEvery after it")

	f = newWakingFixture(t)
	_, _ = f.events(func(h eventHandler, q queue) {
		deleted(ctx, h, q, holder())
	})
	late := &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Namespace: "d", Name: "late", UID: "d/late"},
		Spec: keystonev1.KeystoneServiceSpec{ServiceType: "image", ServiceUser: "late"}}
	refusedNow := late.DeepCopy()
	refusedNow.Status.Conditions = lc.Conditions{{Type: keystonev1.KeystoneServiceServiceReady, Status: corev1.ConditionFalse, Reason: "InvalidInput"}}
	f.now = f.now.Add(time.Second)
	woken, _ = f.events(func(h eventHandler, q queue) {
		updated(ctx, h, q, late, refusedNow)
	})
	g.Expect(woken).To(Equal([]string{"d/late"}), "refused a second after the release: woken")
	woken, _ = f.events(func(h eventHandler, q queue) {
		updated(ctx, h, q, refusedNow, refusedNow)
	})
	g.Expect(woken).To(BeEmpty(), "refused still: not woken again")
	f.now = f.now.Add(releasedFor)
	woken, _ = f.events(func(h eventHandler, q queue) {
		updated(ctx, h, q, late, refusedNow)
	})
	g.Expect(woken).To(BeEmpty(), "refused a minute after the release: regionWatch's")
}
