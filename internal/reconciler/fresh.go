package reconciler

import (
	"crypto/sha256"
	"reflect"
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Versions remembers the resourceVersion of the last status each object was written
// with, so that a reconcile can tell when the cache hands it an object older than its
// own last write (the watch event of a child can arrive before that of the status).
// Acting on such an object would redo finished steps.
type Versions struct {
	mu      sync.Mutex
	written map[types.UID]uint64
	// patches holds, per object, the last status patch sent and the resourceVersion
	// it produced.
	patches map[types.UID]sentPatch
	// objects holds, per object, what the API server answered to the last status write,
	// until the cache has caught up with it: a reconcile handed an older object by the
	// cache starts from this one, for keep after the write, instead of reading it from
	// the API server.
	objects map[types.UID]writtenObject
	// keep is how long a copy in objects is used (WrittenCopyLifetime); sweep, when set,
	// drops the older ones, each within twice keep of its write.
	keep  time.Duration
	sweep *time.Timer
	// now is the clock (time.Now).
	now func() time.Time
}

// WrittenCopyLifetime is how long after a status write Versions uses what the write
// returned: a cache behind by longer than this is read past, from the API server. A copy
// no round asks for again (a converged object is not reconciled again) is dropped
// within twice this.
const WrittenCopyLifetime = 5 * time.Second

// writtenObject is what a status write returned, and when.
type writtenObject struct {
	obj client.Object
	at  time.Time
}

type sentPatch struct {
	// digest is the patch's SHA-256: a thousand objects' patches kept whole were 4 MiB
	// of the manager's heap (BENCHMARKS.md, memory).
	digest          [sha256.Size]byte
	resourceVersion string
}

// NewVersions returns an empty record.
func NewVersions() *Versions {
	return &Versions{written: map[types.UID]uint64{}, patches: map[types.UID]sentPatch{},
		objects: map[types.UID]writtenObject{}, keep: WrittenCopyLifetime, now: time.Now}
}

// RecordPatch notes the status patch data sent for obj, and the resourceVersion of
// obj after it.
func (v *Versions) RecordPatch(obj client.Object, data []byte) {
	if v == nil {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.patches[obj.GetUID()] = sentPatch{digest: sha256.Sum256(data), resourceVersion: obj.GetResourceVersion()}
}

// Repeats tells whether a status patch would repeat the last one sent for an object
// that has not changed since (base is as read this round). The API server may have
// pruned part of that patch (a field the installed schema lacks, such as an older CRD
// without observedGeneration), so the object never
// shows it: sending it again would change nothing, round after round.
func (v *Versions) Repeats(base client.Object, data []byte) bool {
	if v == nil {
		return false
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	last, ok := v.patches[base.GetUID()]
	return ok && last.resourceVersion == base.GetResourceVersion() && last.digest == sha256.Sum256(data)
}

// Record notes obj's resourceVersion after a write, and obj as the write left it (a
// copy, without managedFields, as the cache keeps objects).
func (v *Versions) Record(obj client.Object) {
	v.locked(obj, func(rv uint64) bool {
		if rv > v.written[obj.GetUID()] {
			written := obj.DeepCopyObject().(client.Object)
			written.SetManagedFields(nil)
			v.written[obj.GetUID()] = rv
			v.objects[obj.GetUID()] = writtenObject{obj: written, at: v.now()}
			if v.sweep == nil {
				v.sweep = time.AfterFunc(v.keep, v.dropOld)
			}
		}
		return true
	})
}

// dropOld drops the copies older than keep, and comes back while copies are left.
func (v *Versions) dropOld() {
	v.mu.Lock()
	defer v.mu.Unlock()
	for uid, w := range v.objects {
		if v.now().Sub(w.at) >= v.keep {
			delete(v.objects, uid)
		}
	}
	v.sweep = nil
	if len(v.objects) > 0 {
		v.sweep = time.AfterFunc(v.keep, v.dropOld)
	}
}

// Stale tells whether obj is older than the last write recorded for it.
func (v *Versions) Stale(obj client.Object) bool {
	return v.locked(obj, func(rv uint64) bool { return rv < v.written[obj.GetUID()] })
}

// Refresh makes obj, as the cache handed it, what the last recorded write left, when
// the cache is older than that write (by at most keep), and tells whether it did. The
// round then starts from what the cache will hold once it has caught up with that
// write, as if it had: a later write of another's (a new spec, a deletion) reaches a
// later round through the cache, and meanwhile the status write, locked on this
// version, conflicts with it. Once the cache has caught up, the copy is dropped.
func (v *Versions) Refresh(obj client.Object) bool {
	return v.locked(obj, func(rv uint64) bool {
		written, ok := v.objects[obj.GetUID()]
		if rv >= v.written[obj.GetUID()] {
			delete(v.objects, obj.GetUID())
			return false
		}
		if !ok || v.now().Sub(written.at) >= v.keep {
			return false
		}
		target, source := reflect.ValueOf(obj), reflect.ValueOf(written.obj.DeepCopyObject())
		if target.Kind() != reflect.Pointer || target.Type() != source.Type() {
			return false
		}
		target.Elem().Set(source.Elem())
		return true
	})
}

// locked returns f's answer for obj's resourceVersion, with v's lock held; false when v
// records nothing or obj's resourceVersion is not a number.
func (v *Versions) locked(obj client.Object, f func(rv uint64) bool) bool {
	if v == nil {
		return false
	}
	rv, err := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
	if err != nil {
		return false
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	return f(rv)
}

// Forget drops what was recorded for a deleted object.
func (v *Versions) Forget(obj client.Object) { v.ForgetUID(obj.GetUID()) }

// ForgetUID drops what was recorded for the object of uid.
func (v *Versions) ForgetUID(uid types.UID) {
	if v == nil {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.written, uid)
	delete(v.patches, uid)
	delete(v.objects, uid)
}
