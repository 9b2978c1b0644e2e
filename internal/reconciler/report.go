package reconciler

import (
	"context"
	"fmt"

	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Reporter writes the outcome of a round: conditions and observedGeneration into the
// object, one status patch only when the status differs from what was read, an Event
// per transition, and the metrics.
type Reporter struct {
	Client   client.Client
	Recorder record.EventRecorder
	Metrics  *Metrics
	// Versions records the resourceVersion of each status written.
	Versions *Versions
	// Reader reads objects past the cache when it is behind our own writes.
	Reader client.Reader
	// Kind names the reported kind in metrics.
	Kind string
}

// Get reads obj through the cache, and again from the API server when the cache is
// older than the last status this Reporter wrote for it.
func (r Reporter) Get(ctx context.Context, key client.ObjectKey, obj client.Object) error {
	if err := r.Client.Get(ctx, key, obj); err != nil {
		return err
	}
	if r.Reader != nil && r.Versions.Stale(obj) {
		return r.Reader.Get(ctx, key, obj)
	}
	return nil
}

// Finish ends round for obj, whose state as read from the API server is base, and
// returns reconcileErr, or the error of the status write when there was none. deadlines
// are exported as gauges (Metrics).
func (r Reporter) Finish(ctx context.Context, obj Object, base client.Object, deadlines []Deadline, round *condition.Round,
	reconcileErr error) (condition.Outcome, error) {
	out := round.Finish(reconcileErr)
	obj.SetConditions(out.Conditions)
	obj.SetObservedGeneration(obj.GetGeneration())

	// The lock is on the version this reconcile last read or wrote (its own finalizer
	// patch included): a spec written meanwhile makes the write conflict instead of
	// stamping Ready for an older generation onto the newer one.
	lockBase := base.DeepCopyObject().(client.Object)
	lockBase.SetResourceVersion(obj.GetResourceVersion())
	patch := client.MergeFromWithOptions(lockBase, client.MergeFromWithOptimisticLock{})
	// Whether anything changed is decided without the lock's resourceVersion.
	data, err := client.MergeFrom(base).Data(obj)
	if err != nil {
		return out, joinErr(reconcileErr, fmt.Errorf("computing status patch: %w", err))
	}
	if string(data) != "{}" && !r.Versions.Repeats(base, data) {
		if err := r.Client.Status().Patch(ctx, obj, patch); err != nil {
			if client.IgnoreNotFound(err) == nil {
				return out, reconcileErr
			}
			return out, joinErr(reconcileErr, fmt.Errorf("writing status: %w", err))
		}
		r.Versions.Record(obj)
		r.Versions.RecordPatch(obj, data)
		for _, t := range out.Transitions {
			eventType := corev1.EventTypeNormal
			if t.Warning() {
				eventType = corev1.EventTypeWarning
			}
			r.Recorder.Event(obj, eventType, string(t.Reason), transitionMessage(t))
		}
	}
	if r.Metrics != nil {
		r.Metrics.Observe(r.Kind, obj, out.Conditions, deadlines)
	}
	return out, reconcileErr
}

// RequeueOnConflict turns a conflict of the status write (the object changed during
// the reconcile) into an immediate requeue instead of an error.
func RequeueOnConflict(result ctrl.Result, err error) (ctrl.Result, error) {
	if apierrors.IsConflict(err) {
		return ctrl.Result{Requeue: true}, nil
	}
	return result, err
}

func joinErr(reconcileErr, err error) error {
	if reconcileErr != nil {
		return fmt.Errorf("%w (and %w)", reconcileErr, err)
	}
	return err
}
