package reconciler

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	jsonpatch "github.com/evanphx/json-patch/v5"

	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
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

// Get reads obj through the cache; when the cache is older than the last status this
// Reporter wrote for it, obj is what that write left (Versions.Refresh), or else is
// read again from the API server.
func (r Reporter) Get(ctx context.Context, key client.ObjectKey, obj client.Object) error {
	if err := r.Client.Get(ctx, key, obj); err != nil {
		return err
	}
	if r.Versions.Refresh(obj) {
		return nil
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

	// Whether anything changed is decided without the lock's resourceVersion; the patch
	// is computed once, then locked.
	data, err := statusPatch(base, obj)
	if err != nil {
		return out, joinErr(reconcileErr, fmt.Errorf("computing status patch: %w", err))
	}
	if string(data) != "{}" && !r.Versions.Repeats(base, data) {
		// The lock is on the version this reconcile last read or wrote (its own finalizer
		// patch included): a spec written meanwhile makes the write conflict instead of
		// stamping Ready for an older generation onto the newer one.
		err := r.patchLocked(ctx, obj, data, obj.GetResourceVersion())
		if apierrors.IsConflict(err) {
			err = r.repatch(ctx, obj, data, err)
		}
		if err != nil {
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

// repatch writes data, this round's change of obj's status, once more onto the object
// as the API server has it now, when the write conflicted (conflict) with a writer that
// left the spec as the round read it (the same generation, and its deletion not
// requested meanwhile): a registration adding its finalizer, a label, an annotation.
// The round's conditions are all this kind's own, so they replace what is there, as
// Cluster API's patch helper does for the conditions it owns; a status field the round
// did not change keeps the other writer's value (a merge patch of the round's changes
// only). A new spec keeps the conflict: the round's verdicts are for the older one, and
// the round runs again (RequeueOnConflict).
func (r Reporter) repatch(ctx context.Context, obj Object, data []byte, conflict error) error {
	reader := r.Reader
	if reader == nil {
		reader = r.Client
	}
	latest := obj.DeepCopyObject().(client.Object)
	if err := reader.Get(ctx, client.ObjectKeyFromObject(obj), latest); err != nil {
		return conflict
	}
	if latest.GetGeneration() != obj.GetGeneration() || latest.GetDeletionTimestamp().IsZero() != obj.GetDeletionTimestamp().IsZero() {
		return conflict
	}
	// Locked on the version just read: a third writer conflicts again, and the round runs again.
	return r.patchLocked(ctx, obj, data, latest.GetResourceVersion())
}

// patchLocked writes data, a merge patch of obj's status, only onto resourceVersion
// (the API server answers 409 Conflict to a write onto any other).
func (r Reporter) patchLocked(ctx context.Context, obj Object, data []byte, resourceVersion string) error {
	var changes map[string]any
	if err := json.Unmarshal(data, &changes); err != nil {
		return fmt.Errorf("reading the status patch: %w", err)
	}
	meta, _ := changes["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	meta["resourceVersion"] = resourceVersion
	changes["metadata"] = meta
	locked, err := json.Marshal(changes)
	if err != nil {
		return fmt.Errorf("writing the status patch: %w", err)
	}
	return r.Client.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, locked))
}

// statusPatch is the JSON merge patch that takes base's status to obj's, as a patch of
// the object ({"status": ...}; "{}" when the status is the same): what the status
// subresource writes, and all of it. Only the statuses are encoded: encoding both whole
// objects (spec, metadata and its managedFields), as client.MergeFrom does, was most of
// the cost of a round's finish. A kind without a Status struct field (none of this
// suite's) is compared whole.
func statusPatch(base, obj client.Object) ([]byte, error) {
	before, beforeOK := statusOf(base)
	after, afterOK := statusOf(obj)
	if !beforeOK || !afterOK {
		return client.MergeFrom(base).Data(obj)
	}
	from, err := json.Marshal(before)
	if err != nil {
		return nil, err
	}
	to, err := json.Marshal(after)
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(from, []byte("{")) || !bytes.HasPrefix(to, []byte("{")) {
		return client.MergeFrom(base).Data(obj)
	}
	patch, err := jsonpatch.CreateMergePatch(from, to)
	if err != nil || string(patch) == "{}" {
		return patch, err
	}
	return append(append([]byte(`{"status":`), patch...), '}'), nil
}

// statusOf is obj's Status field; false when it has none.
func statusOf(obj client.Object) (any, bool) {
	v := reflect.ValueOf(obj)
	for v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return nil, false
	}
	status := v.FieldByName("Status")
	if !status.IsValid() || !status.CanInterface() {
		return nil, false
	}
	return status.Interface(), true
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
