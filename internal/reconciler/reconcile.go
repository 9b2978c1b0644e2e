package reconciler

import (
	"context"
	"fmt"

	"github.com/keystone-stepwise/keystone-operator/internal/finalizers"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Object is an object of a kind the skeleton reconciles: its status accessors
// (apis/keystone/v1beta1/status.go) are how the engine reads and writes its conditions,
// observed generation and related objects.
type Object interface {
	client.Object
	GetConditions() lc.Conditions
	SetConditions(lc.Conditions)
	SetObservedGeneration(int64)
	SetRelatedObjects([]corev1.ObjectReference)
}

// Kind declares what the one reconcile skeleton needs to know of a kind: how to make
// an empty object, its steps, its finalizer, the state its phases
// share, the phases, and what deletion does. A controller declares nothing else.
type Kind[O Object, S any] struct {
	// Name is the kind as reported in metrics and events.
	Name string
	// New returns an empty object of the kind.
	New func() O
	// Steps are the step conditions that apply to the object's spec, in declared order
	// (AllSteps when they do not depend on it).
	Steps func(obj O) condition.Steps
	// Finalizer is put on the object before its first phase runs; Delete removes it.
	Finalizer string
	// Record, when set, returns annotations written in the patch that adds Finalizer:
	// what the phases must have recorded before their first write outside the object.
	Record func(obj O) map[string]string
	// Default, when set, fills in obj's spec what it leaves to the operator, as a
	// defaulting webhook would, and says what it set ("" when nothing): the spec is
	// patched before the phases run, with a Normal Event "Defaulted" saying so.
	Default func(obj O) string
	// Scope builds what one reconcile's phases share.
	Scope func(obj O, round *condition.Round) S
	// Phases mark the steps (RunPhases).
	Phases []Phase[S]
	// Delete runs while the object is being deleted, and removes Finalizer when done.
	Delete func(ctx context.Context, s S) (ctrl.Result, error)
	// Related names the objects the object created or holds, for
	// status.relatedObjects: those that exist are listed, in this order, after every
	// round whose phases returned no error (Related).
	Related func(s S) []client.Object
	// Deadlines, when set, are the points in time the object reports for alerting
	// (Metrics: keystone_operator_deadline_timestamp_seconds), read after the phases.
	Deadlines func(s S) []Deadline
	// Gone, when set, runs when the object of a request no longer exists: to release
	// what it held, when it was removed without its deletion running (its finalizer
	// stripped by hand).
	Gone func(ctx context.Context, key types.NamespacedName) error
}

// AllSteps declares steps that apply whatever the spec.
func AllSteps[O client.Object](steps condition.Steps) func(O) condition.Steps {
	return func(O) condition.Steps { return steps }
}

// Reconciler is the reconcile skeleton of every kind, top to bottom: get the object,
// begin a round, finish it on every path (Ready, transition times, observedGeneration,
// one status patch only when something changed, events, metrics), deletion, the
// finalizer, then the phases.
type Reconciler[O Object, S any] struct {
	Client   client.Client
	Reporter Reporter
	Clock    clock.PassiveClock
	Kind     Kind[O, S]
}

// NewReconciler returns the skeleton for kind; the reporter reports under its name.
func NewReconciler[O Object, S any](c client.Client, reporter Reporter, clk clock.PassiveClock, kind Kind[O, S]) *Reconciler[O, S] {
	reporter.Kind = kind.Name
	return &Reconciler[O, S]{Client: c, Reporter: reporter, Clock: clk, Kind: kind}
}

var _ reconcile.Reconciler = &Reconciler[Object, any]{}

// Reconcile runs one round of the kind's steps for the object of req and reports it.
func (r *Reconciler[O, S]) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, err error) {
	ctx = withCreated(ctx)
	obj := r.Kind.New()
	if err := r.Reporter.Get(ctx, req.NamespacedName, obj); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		// Gone while its series were kept (a deletion blocked, then its finalizer
		// removed by hand): they go now.
		for _, uid := range r.Reporter.Metrics.ForgetNamed(r.Reporter.Kind, req.Namespace, req.Name) {
			r.Reporter.Versions.ForgetUID(uid)
		}
		if r.Kind.Gone != nil {
			return ctrl.Result{}, r.Kind.Gone(ctx, req.NamespacedName)
		}
		return ctrl.Result{}, nil
	}
	base := obj.DeepCopyObject().(client.Object)
	var deadlines []Deadline
	round := r.Kind.Steps(obj).Begin(obj.GetConditions(), r.Clock.Now())
	s := r.Kind.Scope(obj, round)
	defer func() {
		if apierrors.IsConflict(err) {
			// Another writer changed an object this round meant to change: the
			// round saw a world that is gone, so it reports nothing and runs again.
			result, err = ctrl.Result{Requeue: true}, nil
			return
		}
		_, err = r.Reporter.Finish(ctx, obj, base, deadlines, round, err)
		result, err = RequeueOnConflict(result, err)
		// A deletion still blocked on this round keeps its series, so that an alert on
		// a step stuck False can fire; once the finalizer is released they go.
		if !obj.GetDeletionTimestamp().IsZero() && !controllerutil.ContainsFinalizer(obj, r.Kind.Finalizer) {
			r.Reporter.Metrics.Forget(obj)
			r.Reporter.Versions.Forget(obj)
		}
	}()
	if !obj.GetDeletionTimestamp().IsZero() {
		return r.Kind.Delete(ctx, s)
	}
	if err := r.prepare(ctx, obj); err != nil {
		return ctrl.Result{}, err
	}
	result, err = RunPhases(ctx, round, s, r.Kind.Phases)
	if err != nil {
		return result, err
	}
	if r.Kind.Related != nil {
		related, err := Related(ctx, r.Client, r.Kind.Related(s)...)
		if err != nil {
			return result, err
		}
		obj.SetRelatedObjects(related)
	}
	if r.Kind.Deadlines != nil {
		deadlines = r.Kind.Deadlines(s)
	}
	return result, nil
}

// prepare readies obj for its phases: its finalizer, with what Kind.Record records, and
// the defaults of its spec.
func (r *Reconciler[O, S]) prepare(ctx context.Context, obj O) error {
	var record map[string]string
	if r.Kind.Record != nil {
		record = r.Kind.Record(obj)
	}
	if err := finalizers.AddRecording(ctx, r.Client, obj, r.Kind.Finalizer, record); err != nil {
		return err
	}
	return r.defaults(ctx, obj)
}

// defaults patches into obj's spec what Kind.Default fills in, locked on the version
// read (a spec written meanwhile makes it conflict, and the round runs again).
func (r *Reconciler[O, S]) defaults(ctx context.Context, obj O) error {
	if r.Kind.Default == nil {
		return nil
	}
	before := obj.DeepCopyObject().(client.Object)
	what := r.Kind.Default(obj)
	if what == "" {
		return nil
	}
	if err := r.Client.Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("defaulting the spec (%s): %w", what, err)
	}
	r.Reporter.Recorder.Event(obj, corev1.EventTypeNormal, "Defaulted", what)
	return nil
}
