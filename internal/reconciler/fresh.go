package reconciler

import (
	"crypto/sha256"
	"strconv"
	"sync"

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
}

type sentPatch struct {
	// digest is the patch's SHA-256: a thousand objects' patches kept whole were 4 MiB
	// of the manager's heap (BENCHMARKS.md, memory).
	digest          [sha256.Size]byte
	resourceVersion string
}

// NewVersions returns an empty record.
func NewVersions() *Versions {
	return &Versions{written: map[types.UID]uint64{}, patches: map[types.UID]sentPatch{}}
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

// Record notes obj's resourceVersion after a write.
func (v *Versions) Record(obj client.Object) {
	if v == nil {
		return
	}
	rv, err := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
	if err != nil {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if rv > v.written[obj.GetUID()] {
		v.written[obj.GetUID()] = rv
	}
}

// Stale tells whether obj is older than the last write recorded for it.
func (v *Versions) Stale(obj client.Object) bool {
	if v == nil {
		return false
	}
	rv, err := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
	if err != nil {
		return false
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	return rv < v.written[obj.GetUID()]
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
}
