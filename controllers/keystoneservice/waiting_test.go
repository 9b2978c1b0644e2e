package keystoneservice

import (
	"context"
	"sort"
	"testing"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/controllers/registration"
	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
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

// queue and wakes are what a watch's handler is given, and is.
type (
	queue = workqueue.TypedRateLimitingInterface[reconcile.Request]
	wakes = handler.TypedEventHandler[client.Object, reconcile.Request]
)

// TestWakeRefused: a KeystoneService that lets go of what it held wakes those refused for
// it, of any namespace, and no other: when it is gone, those waiting on its type's group
// or its user; when its service moved to another type (its ID changed after a change of
// serviceType), those waiting on the type it left; when its recorded user changed, those
// waiting on the user it left.
func TestWakeRefused(t *testing.T) {
	g := NewWithT(t)
	scheme := runtime.NewScheme()
	g.Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	g.Expect(keystonev1.AddToScheme(scheme)).To(Succeed())
	refused := func(ns, name, serviceType, user string, step lc.Type) *keystonev1.KeystoneService {
		return &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(ns + "/" + name)},
			Spec: keystonev1.KeystoneServiceSpec{ServiceType: serviceType, ServiceUser: user},
			Status: keystonev1.KeystoneServiceStatus{Conditions: lc.Conditions{
				{Type: step, Status: corev1.ConditionFalse, Reason: "InvalidInput"}}}}
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithIndex(&keystonev1.KeystoneService{}, refusedIndex, refusedOf).WithObjects(
		refused("b", "twin", "image", "glance-twin", keystonev1.KeystoneServiceServiceReady),
		refused("b", "intruder", "image-other", "glance", keystonev1.KeystoneServiceUserReady),
		refused("c", "neutron", "network", "neutron", keystonev1.KeystoneServiceServiceReady),
		refused("c", "nova", "compute", "nova", keystonev1.KeystoneServiceUserReady),
	).Build()
	r := &Reconciler{Base: registration.Base{Client: c}}
	ctx := context.Background()
	woken := func(do func(wakes, queue)) []string {
		h := r.wakeRefused()
		q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
		defer q.ShutDown()
		do(h, q)
		var out []string
		for q.Len() > 0 {
			item, _ := q.Get()
			out = append(out, item.String())
			q.Done(item)
		}
		sort.Strings(out)
		return out
	}
	glance := &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "glance", UID: "a/glance",
		Annotations: map[string]string{UserAnnotation: "glance"}},
		Spec:   keystonev1.KeystoneServiceSpec{ServiceType: "image", ServiceUser: "glance"},
		Status: keystonev1.KeystoneServiceStatus{ServiceID: "s1"}}

	g.Expect(woken(func(h wakes, q queue) {
		h.Delete(ctx, event.TypedDeleteEvent[client.Object]{Object: glance}, q)
	})).To(Equal([]string{"b/intruder", "b/twin"}), "gone: its type's and its user's")

	g.Expect(woken(func(h wakes, q queue) {
		moving := glance.DeepCopy()
		moving.Spec.ServiceType = "image-a"
		h.Update(ctx, event.TypedUpdateEvent[client.Object]{ObjectOld: glance, ObjectNew: moving}, q)
		g.Expect(q.Len()).To(BeZero(), "a new spec lets go of nothing yet")
		moved := moving.DeepCopy()
		moved.Status.ServiceID = "s2"
		h.Update(ctx, event.TypedUpdateEvent[client.Object]{ObjectOld: moving, ObjectNew: moved}, q)
	})).To(Equal([]string{"b/twin"}), "its service moved to another type: the type it left")

	g.Expect(woken(func(h wakes, q queue) {
		renamed := glance.DeepCopy()
		renamed.Spec.ServiceName = "glance-a"
		renamed.Status.ServiceID = "s2"
		h.Update(ctx, event.TypedUpdateEvent[client.Object]{ObjectOld: glance, ObjectNew: renamed}, q)
	})).To(BeEmpty(), "another name, the same type: the type is still held")

	g.Expect(woken(func(h wakes, q queue) {
		moved := glance.DeepCopy()
		moved.Spec.ServiceUser = "glance-a"
		moved.Annotations[UserAnnotation] = "glance-a"
		h.Update(ctx, event.TypedUpdateEvent[client.Object]{ObjectOld: glance, ObjectNew: moved}, q)
	})).To(Equal([]string{"b/intruder"}), "its recorded user moved: the user it left")
}
