package registration

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Recent remembers, per object, the inputs with which a round last found Keystone
// matching its spec, and when. Keystone cannot be watched, so a round reads it; but a
// round with the same inputs shortly after is a duplicate wake-up (an object created
// while the one it depends on turns Ready gets both events, one of them while its
// first round runs): it reuses that finding instead of asking Keystone again. Any
// change of the inputs (spec, annotations, the dependency's state, the status the
// finding was written to) reads Keystone again, and so does every round after Window.
type Recent struct {
	// Window is how long a finding stands for identical inputs; RecentWindow when 0.
	Window time.Duration

	mu        sync.Mutex
	seen      map[types.UID]finding
	lastSweep time.Time
}

// RecentWindow is how long a finding stands by default: long enough to absorb the
// duplicate wake-ups of a thousand registrations queued at once.
const RecentWindow = 30 * time.Second

func (r *Recent) window() time.Duration {
	if r.Window == 0 {
		return RecentWindow
	}
	return r.Window
}

type finding struct {
	inputs string
	at     time.Time
}

// Matches tells whether the object's last finding was made with these inputs less than
// Window before now.
func (r *Recent) Matches(uid types.UID, inputs string, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	f, ok := r.seen[uid]
	return ok && f.inputs == inputs && now.Sub(f.at) < r.window()
}

// Record notes a finding made now with these inputs; findings older than Window are
// dropped on the way, so that objects gone leave nothing behind.
func (r *Recent) Record(uid types.UID, inputs string, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = map[types.UID]finding{}
	}
	if now.Sub(r.lastSweep) > r.window() {
		for id, f := range r.seen {
			if now.Sub(f.at) >= r.window() {
				delete(r.seen, id)
			}
		}
		r.lastSweep = now
	}
	r.seen[uid] = finding{inputs: inputs, at: now}
}

// Forget drops the object's finding: its round failed, or it is being deleted.
func (r *Recent) Forget(uid types.UID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.seen, uid)
}
