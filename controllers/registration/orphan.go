package registration

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// A deletion that cannot remove its registration from Keystone waits, and says so in
// its step, naming what would stay valid in Keystone and the way out. It gives up, and
// leaves that in Keystone, in two cases only:
//   - the annotation OrphanAnnotation is on the object (or on the KeystoneService an
//     endpoint is under, or on the KeystoneAPI while the KeystoneAPI itself is being
//     deleted), the object or its KeystoneAPI is being deleted, and Keystone has been
//     unreachable or refusing the operator's credentials (identity.Unreachable: no
//     answer from Keystone's host, 5xx, 401, 403; or the admin's password gone) for
//     OrphanGrace at least, counted from the first of the deletion's attempts that found
//     it so, with none between that got another answer (KeystoneFailures). A refusal of
//     the request itself (another 4xx) never orphans, nor does a failure shorter than the
//     grace, nor an error of the Kubernetes API: an annotation alone cannot leave a valid
//     service user or credential behind while Keystone answers;
//   - its KeystoneAPI has been deleting for OrphanAfter: a teardown never hangs.
// Either way what stays in Keystone is named in a Warning Event "Orphaned" on the
// object: nothing is left silently, as with Cluster API's and Crossplane's deletion
// policies.

// OrphanAnnotation is the annotation that, "true" on a KeystoneService, KeystoneEndpoint
// or KeystoneApplicationCredential (or on the KeystoneAPI of its namespace, while that is
// being deleted), lets its deletion finish without removing its registration from
// Keystone once Keystone has been unreachable or refusing for OrphanGrace.
const OrphanAnnotation = "keystone.openstack.org/orphan-on-delete"

// DefaultOrphanGrace is how long Keystone must have been unreachable or refusing the
// operator's credentials before an annotated deletion gives up (--orphan-grace).
const DefaultOrphanGrace = 5 * time.Minute

// OrphanAfter is how long the registrations of a KeystoneAPI being deleted try to
// leave Keystone before they give up and orphan.
const OrphanAfter = 10 * time.Minute

// OrphanedReason is the Event that names what a deletion left in Keystone.
const OrphanedReason = "Orphaned"

// Orphan is one deletion that failed to leave Keystone, as Orphaning judges it.
type Orphan struct {
	// Object is being deleted, or left by a KeystoneAPI being deleted (API).
	Object client.Object
	API    *keystonev1.KeystoneAPI
	// Also are objects whose annotation counts as Object's (the KeystoneService an
	// endpoint is under).
	Also []client.Object
	// Err is why it failed, asking Keystone at At (its URL; "" when not known);
	// FailingSince since when Keystone has been unreachable for this deletion
	// (KeystoneFailures).
	Err          error
	At           string
	FailingSince time.Time
}

// unreachable tells whether o failed because Keystone could not be reached or refused
// the operator's credentials.
func (o Orphan) unreachable() bool { return identity.Unreachable(o.Err, o.At) }

// Orphaning says why o's deletion may leave its registration in Keystone at now, with
// grace the time Keystone must have been unreachable; "" when it may not. wait says,
// when it may not, how long until it may, annotated as it is (0: not by waiting).
func Orphaning(o Orphan, now time.Time, grace time.Duration) (why string, wait time.Duration) {
	apiDeleting := o.API != nil && !o.API.DeletionTimestamp.IsZero()
	if apiDeleting && now.Sub(o.API.DeletionTimestamp.Time) >= OrphanAfter {
		return fmt.Sprintf("KeystoneAPI %s has been deleting for more than %s", o.API.Name, OrphanAfter), 0
	}
	if o.Object.GetDeletionTimestamp().IsZero() && !apiDeleting {
		return "", 0
	}
	annotated := ""
	for _, obj := range append([]client.Object{o.Object}, o.Also...) {
		if obj != nil && obj.GetAnnotations()[OrphanAnnotation] == "true" {
			annotated = fmt.Sprintf("%s %s annotated %s", kindOf(obj), obj.GetName(), OrphanAnnotation)
			break
		}
	}
	if annotated == "" && apiDeleting && o.API.Annotations[OrphanAnnotation] == "true" {
		annotated = "KeystoneAPI " + o.API.Name + " annotated " + OrphanAnnotation
	}
	if annotated == "" || !o.unreachable() {
		return "", 0
	}
	if failing := now.Sub(o.FailingSince); failing < grace {
		return "", grace - failing
	}
	return fmt.Sprintf("%s, and Keystone unreachable or refusing since %s", annotated, o.FailingSince.UTC().Format(time.RFC3339)), 0
}

// GiveUp ends a deregistration of obj that failed with err (step False already): when
// the deletion may orphan (Orphaning), it names what stays valid in Keystone (what) in a
// Warning Event and returns nil, so the deletion goes on; otherwise it adds what would
// stay and the way out to step's message and returns err, retried (even one Keystone
// refused, while the KeystoneAPI is being deleted: OrphanAfter must come).
func (s *Session) GiveUp(step lc.Type, obj client.Object, api *keystonev1.KeystoneAPI, what string, err error, also ...client.Object) error {
	now := s.clock.Now()
	o := Orphan{Object: obj, API: api, Also: also, Err: err, At: s.Admin.URL}
	o.FailingSince = s.failures.Observe(obj.GetUID(), now, o.unreachable())
	why, wait := Orphaning(o, now, s.orphanGrace)
	if why != "" {
		s.failures.Forget(obj.GetUID())
		at := "Keystone"
		if api != nil {
			at += " at " + api.Status.APIEndpoints[keystonev1.EndpointInternal]
		}
		s.recorder.Eventf(obj, corev1.EventTypeWarning, OrphanedReason, "%s left valid in %s (%s): %v", what, at, why, err)
		return nil
	}
	if c := s.Round.Get(step); c != nil && c.Status == corev1.ConditionFalse {
		s.Round.MarkFalse(step, condition.Reason{Name: c.Reason, Severity: c.Severity}, "%s%s", c.Message, orphanHint(what, wait, s.orphanGrace))
	}
	if api != nil && !api.DeletionTimestamp.IsZero() && errors.Is(err, reconcile.TerminalError(nil)) {
		return errors.New(err.Error())
	}
	return err
}

// orphanHint ends the message of a deletion that cannot leave Keystone: what would stay
// valid there, and the way out (wait: how long until it opens, annotated).
func orphanHint(what string, wait, grace time.Duration) string {
	if wait > 0 {
		return fmt.Sprintf("; annotated %s: %s stays valid in Keystone if it is still unreachable in %s", OrphanAnnotation, what, wait.Round(time.Second))
	}
	return fmt.Sprintf("; to finish deleting and leave %s valid in Keystone once Keystone has been unreachable or refusing "+
		"for %s, annotate this object %s=true", what, grace, OrphanAnnotation)
}

// kindOf is the Go type name of obj, its kind for this suite's types ("KeystoneService").
func kindOf(obj client.Object) string {
	name := fmt.Sprintf("%T", obj)
	return name[strings.LastIndex(name, ".")+1:]
}

// KeystoneFailures remembers, per object, since when its deletion has found Keystone
// unreachable or refusing the operator's credentials, with no attempt between that got
// another answer: what OrphanGrace counts from. A step's transition time would not do:
// a deletion waiting hours for a data plane, or for its endpoints, is False all along,
// and would orphan at Keystone's first 503. Kept in memory: a restart counts anew, which
// only makes the wait longer. An object not seen for forgetAfter is forgotten.
type KeystoneFailures struct {
	mu    sync.Mutex
	since map[types.UID]failing
}

// failing is one object's run of failures: its first and its latest.
type failing struct{ first, last time.Time }

// forgetAfter is how long an object's run of failures is kept without another attempt:
// more than the longest backoff between two attempts (controller-runtime's, about 17
// minutes).
const forgetAfter = time.Hour

// NewKeystoneFailures returns an empty KeystoneFailures.
func NewKeystoneFailures() *KeystoneFailures {
	return &KeystoneFailures{since: map[types.UID]failing{}}
}

// Observe records an attempt of the deletion of object uid at now, which found Keystone
// unreachable or not, and returns since when it has been unreachable (now when it was
// not, or this is the first such attempt).
func (f *KeystoneFailures) Observe(uid types.UID, now time.Time, unreachable bool) time.Time {
	if f == nil {
		return now // nothing remembered: no grace ever elapses
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for id, run := range f.since {
		if now.Sub(run.last) > forgetAfter {
			delete(f.since, id)
		}
	}
	if !unreachable {
		delete(f.since, uid)
		return now
	}
	run, ok := f.since[uid]
	if !ok {
		run.first = now
	}
	run.last = now
	f.since[uid] = run
	return run.first
}

// Forget drops what is recorded of object uid (its deletion is over).
func (f *KeystoneFailures) Forget(uid types.UID) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.since, uid)
}
