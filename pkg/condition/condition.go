package condition

import (
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types the engine maintains besides the declared steps.
const (
	// ReadyCondition summarises all steps.
	ReadyCondition lc.Type = lc.ReadyCondition
	// StalledCondition is True, only while a step is False with severity Error, so that
	// kstatus reports Failed.
	StalledCondition lc.Type = "Stalled"
	// ReconcilingCondition is True while Ready is not True and nothing is stalled, so that
	// kstatus reports InProgress.
	ReconcilingCondition lc.Type = "Reconciling"
)

// MaxMessageLength bounds every condition message, in bytes.
const MaxMessageLength = 1024

const (
	initMessage    = "not evaluated yet"
	waitingMessage = "waiting for %s"
)

// Steps is the declared, ordered list of step conditions of a kind.
type Steps []lc.Type

// Round is one reconcile's view of an object's conditions: it starts from the
// conditions read from the API server, re-initialises every applicable step and
// collects what the phases observe. It is not safe for concurrent use.
type Round struct {
	steps   []lc.Type
	saved   lc.Conditions
	current map[lc.Type]*lc.Condition
	now     time.Time
	// done holds steps whose work is done in this round but not yet confirmed.
	done map[lc.Type]bool
	// halted stops the phases after the current one (Halt).
	halted bool
	// reports are the conditions reported beside the steps (Report), in order.
	reports lc.Conditions
	// carried are the saved conditions kept as they were (Carry), in order.
	carried []lc.Type
}

// Halt runs no phase after the current one this round, observing ones included: the
// object is not to be acted on or observed further (for example a second object of a
// kind that allows one per namespace). The steps after it stay
// Unknown and say which step they wait for.
func (r *Round) Halt() { r.halted = true }

// Without returns the steps that are not in skip, in order: the steps that apply to a
// spec that skip does not apply to.
func (s Steps) Without(skip ...lc.Type) Steps {
	out := make(Steps, 0, len(s))
	for _, t := range s {
		if !slices.Contains(skip, t) {
			out = append(out, t)
		}
	}
	return out
}

// Begin starts a reconcile: it keeps a copy of saved, and re-initialises Ready and
// every step to Unknown (reason Init). Steps that do not apply to a spec are left out
// of s (Without), and so out of the list. now stamps transitions.
func (s Steps) Begin(saved lc.Conditions, now time.Time) *Round {
	r := &Round{
		saved:   append(lc.Conditions(nil), saved...),
		current: map[lc.Type]*lc.Condition{},
		done:    map[lc.Type]bool{},
		now:     now.UTC().Truncate(time.Second),
	}
	for _, t := range s {
		r.steps = append(r.steps, t)
		r.current[t] = &lc.Condition{Type: t, Status: corev1.ConditionUnknown, Reason: InitReason, Message: initMessage}
	}
	return r
}

// WaitingFor returns the first applicable step before t that is neither True nor done
// this round, unneeded aside: what t's actions wait for; "" when there is none. A step
// whose actions do not need some steps before it names them in unneeded: work that does
// not need a blocked step still happens (docs/conditions.md). Ready still waits for
// every step, and its blocking step is still the first not True.
func (r *Round) WaitingFor(t lc.Type, unneeded ...lc.Type) lc.Type {
	for _, step := range r.steps {
		if step == t {
			return ""
		}
		if !r.IsTrue(step) && !r.done[step] && !slices.Contains(unneeded, step) {
			return step
		}
	}
	return ""
}

// Halted reports whether a phase halted the round (Halt): no later phase runs.
func (r *Round) Halted() bool { return r.halted }

// Applies reports whether step t applies to the object this round (declared and not
// skipped).
func (r *Round) Applies(t lc.Type) bool { return r.current[t] != nil }

// Steps returns the applicable steps in declared order.
func (r *Round) Steps() []lc.Type { return append([]lc.Type(nil), r.steps...) }

// Get returns the condition of step t as marked so far in this round, or nil when t
// is not an applicable step.
func (r *Round) Get(t lc.Type) *lc.Condition {
	c, ok := r.current[t]
	if !ok {
		return nil
	}
	cp := *c
	return &cp
}

// Carry keeps the saved condition t, if there is one, in the list as it was: a
// condition another controller wrote that still says something this one needs in a
// later round (keystone-operator's record of what it registered), until Drop. It is
// neither a step nor a report: Ready ignores it.
func (r *Round) Carry(t lc.Type) {
	if r.saved.Get(t) != nil && r.current[t] == nil && !slices.Contains(r.carried, t) {
		r.carried = append(r.carried, t)
	}
}

// Drop stops carrying t: it leaves the list.
func (r *Round) Drop(t lc.Type) {
	r.carried = slices.DeleteFunc(r.carried, func(c lc.Type) bool { return c == t })
}

// Carried tells whether the saved condition t is carried to the list this round.
func (r *Round) Carried(t lc.Type) bool { return slices.Contains(r.carried, t) }

// FalseSince returns when step t turned False: its saved transition time when it was
// False before this round, else the round's time.
func (r *Round) FalseSince(t lc.Type) time.Time {
	if prev := r.saved.Get(t); prev != nil && prev.Status == corev1.ConditionFalse && !prev.LastTransitionTime.IsZero() {
		return prev.LastTransitionTime.Time
	}
	return r.now
}

// IsTrue tells whether step t was marked True in this round.
func (r *Round) IsTrue(t lc.Type) bool {
	c := r.current[t]
	return c != nil && c.Status == corev1.ConditionTrue
}

// MarkTrue marks step t done.
func (r *Round) MarkTrue(t lc.Type, format string, args ...any) {
	r.set(t, corev1.ConditionTrue, ReadyReason, lc.SeverityNone, fmt.Sprintf(format, args...))
}

// MarkFalse marks step t not done, for reason, whose severity the catalogue fixes.
func (r *Round) MarkFalse(t lc.Type, reason Reason, format string, args ...any) {
	r.set(t, corev1.ConditionFalse, reason.Name, reason.Severity, fmt.Sprintf(format, args...))
}

// Verdict is what a decision makes of what a phase observed, for one step: True with a
// message, or False with a reason (and its severity) and a message. Decisions are pure
// functions returning a Verdict, table-tested; the phase applies it (Round.Apply).
type Verdict struct {
	True    bool
	Reason  Reason
	Message string
	// Done is a False verdict for work this round did, which the next round confirms
	// (MarkDone).
	Done bool
}

// TrueVerdict is a step done, saying message.
func TrueVerdict(format string, args ...any) Verdict {
	return Verdict{True: true, Message: fmt.Sprintf(format, args...)}
}

// FalseVerdict is a step not done, for reason, saying message.
func FalseVerdict(reason Reason, format string, args ...any) Verdict {
	return Verdict{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// DoneVerdict is work this round did, for an Info reason, saying message: the step is
// False until the next round confirms it (MarkDone).
func DoneVerdict(reason Reason, format string, args ...any) Verdict {
	return Verdict{Reason: reason, Message: fmt.Sprintf(format, args...), Done: true}
}

// Report sets condition t, which is not a step, as v says: a summary of something the
// object does not wait for (a KeystoneAPI's view of the registrations that use it). It is
// listed after the steps, in the order first reported, gets transition times and Events
// as a step does, and never counts for Ready, Stalled or Reconciling. A condition not
// reported in a round is not listed.
func (r *Round) Report(t lc.Type, v Verdict) {
	if r.current[t] != nil || t == ReadyCondition || t == StalledCondition || t == ReconcilingCondition {
		panic(fmt.Sprintf("condition %q is a step or the engine's own: it is marked, not reported", t))
	}
	c := lc.Condition{Type: t, Status: corev1.ConditionTrue, Reason: ReadyReason, Message: truncate(v.Message)}
	if !v.True {
		c.Status, c.Reason, c.Severity = corev1.ConditionFalse, v.Reason.Name, v.Reason.Severity
	}
	for i := range r.reports {
		if r.reports[i].Type == t {
			r.reports[i] = c
			return
		}
	}
	r.reports = append(r.reports, c)
}

// Apply marks step t as v says.
func (r *Round) Apply(t lc.Type, v Verdict) {
	switch {
	case v.True:
		r.MarkTrue(t, "%s", v.Message)
	case v.Done:
		r.MarkDone(t, v.Reason, "%s", v.Message)
	default:
		r.MarkFalse(t, v.Reason, "%s", v.Message)
	}
}

// MarkDone marks step t False with an Info reason (such as ServiceCreated) for work
// that this round did and that the next round confirms by observing it; the phases
// after it still run in this round.
func (r *Round) MarkDone(t lc.Type, reason Reason, format string, args ...any) {
	if reason.Severity != lc.SeverityInfo {
		panic(fmt.Sprintf("MarkDone takes an Info reason, not %s (%s)", reason.Name, reason.Severity))
	}
	r.MarkFalse(t, reason, format, args...)
	r.done[t] = true
}

// Unconfirmed tells whether a step was marked with MarkDone and is not yet confirmed.
func (r *Round) Unconfirmed() bool {
	for t := range r.done {
		if c := r.current[t]; c != nil && c.Status != corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func (r *Round) set(t lc.Type, status corev1.ConditionStatus, reason lc.Reason, severity lc.Severity, message string) {
	c, ok := r.current[t]
	if !ok {
		panic(fmt.Sprintf("condition %q is not an applicable step of this round", t))
	}
	c.Status, c.Reason, c.Severity, c.Message = status, reason, severity, truncate(message)
	delete(r.done, t)
}

// Transition is a change of a condition's status or reason, for an Event.
type Transition struct {
	Type     lc.Type
	Status   corev1.ConditionStatus
	Reason   lc.Reason
	Severity lc.Severity
	Message  string
}

// Warning tells whether the transition deserves a Warning event.
func (t Transition) Warning() bool {
	return SeverityRank(t.Severity) > 0
}

// Outcome is the result of a round.
type Outcome struct {
	// Conditions is the list to store: Ready, the steps in declared order, the reports
	// (Report), then Stalled or Reconciling.
	Conditions lc.Conditions
	// Changed tells whether Conditions differs from what Begin was given.
	Changed bool
	// Transitions lists the conditions whose status or reason changed, for Events.
	Transitions []Transition
	// Stalled tells whether a step failed with severity Error.
	Stalled bool
}

// Finish ends the round: a step still Unknown when the reconcile failed with err is
// marked ReconcileError; Ready is computed from the blocking step; steps after it
// say what they wait for; transition times are restored where the status did not
// change. It can be called on every path, errors included.
func (r *Round) Finish(err error) Outcome {
	blocking, done := r.blocking()
	if blocking != nil && blocking.Status == corev1.ConditionUnknown && err != nil {
		r.MarkFalse(blocking.Type, ReconcileError, "%v", err)
	}
	ready := r.ready(blocking, done)
	steps := r.stepList(blocking)
	list := append(append(lc.Conditions{ready}, steps...), r.reports...)
	for _, t := range r.carried {
		list = append(list, *r.saved.Get(t))
	}
	out := Outcome{}
	if summary := r.summary(steps, ready); summary != nil {
		out.Stalled = summary.Type == StalledCondition
		list = append(list, *summary)
	}
	out.Transitions = r.stamp(list)
	out.Conditions = list
	out.Changed = !SameConditions(list, r.saved)
	return out
}

// ready computes the Ready condition from the blocking step (nil when every step is True).
func (r *Round) ready(blocking *lc.Condition, done int) lc.Condition {
	if blocking == nil {
		return lc.Condition{Type: ReadyCondition, Status: corev1.ConditionTrue, Reason: ReadyReason,
			Message: fmt.Sprintf("all %d steps ready", len(r.steps))}
	}
	severity := blocking.Severity
	if severity == lc.SeverityNone {
		severity = lc.SeverityInfo
	}
	return lc.Condition{Type: ReadyCondition, Status: corev1.ConditionFalse, Reason: blocking.Reason, Severity: severity,
		Message: truncate(fmt.Sprintf("%s (%d/%d ready): %s", blocking.Type, done, len(r.steps), blocking.Message))}
}

// stepList returns the steps in declared order; those not reached say what they wait for.
func (r *Round) stepList(blocking *lc.Condition) lc.Conditions {
	list := make(lc.Conditions, 0, len(r.steps))
	for _, t := range r.steps {
		c := *r.current[t]
		if blocking != nil && c.Status == corev1.ConditionUnknown && c.Reason == InitReason && t != blocking.Type {
			c.Message = fmt.Sprintf(waitingMessage, blocking.Type)
		}
		list = append(list, c)
	}
	return list
}

// summary returns Stalled when a step failed with severity Error, else Reconciling
// while Ready is not True, else nil.
func (r *Round) summary(steps lc.Conditions, ready lc.Condition) *lc.Condition {
	for _, c := range steps {
		if c.Status == corev1.ConditionFalse && c.Severity == lc.SeverityError {
			return &lc.Condition{Type: StalledCondition, Status: corev1.ConditionTrue, Reason: c.Reason,
				Message: truncate(fmt.Sprintf("%s: %s", c.Type, c.Message))}
		}
	}
	if ready.Status != corev1.ConditionTrue {
		return &lc.Condition{Type: ReconcilingCondition, Status: corev1.ConditionTrue, Reason: ready.Reason, Message: ready.Message}
	}
	return nil
}

// stamp sets transition times, keeping the saved one where the status did not change,
// and returns the transitions worth an Event.
func (r *Round) stamp(list lc.Conditions) []Transition {
	var transitions []Transition
	for i := range list {
		c := &list[i]
		prev := r.saved.Get(c.Type)
		if prev != nil && prev.Status == c.Status {
			c.LastTransitionTime = prev.LastTransitionTime
		} else {
			c.LastTransitionTime = metav1.NewTime(r.now)
		}
		if eventWorthy(c, prev) {
			transitions = append(transitions, Transition{Type: c.Type, Status: c.Status, Reason: c.Reason,
				Severity: c.Severity, Message: c.Message})
		}
	}
	return transitions
}

// eventWorthy tells whether c changed status or reason since prev. A condition that
// first appears Unknown has not happened yet, and Reconciling and Stalled repeat what
// Ready and the failing step already say.
func eventWorthy(c *lc.Condition, prev *lc.Condition) bool {
	if c.Type == ReconcilingCondition || c.Type == StalledCondition {
		return false
	}
	if prev == nil {
		return c.Status != corev1.ConditionUnknown
	}
	return prev.Status != c.Status || prev.Reason != c.Reason
}

// blocking returns the first applicable step that is not True, and how many steps are True.
func (r *Round) blocking() (*lc.Condition, int) {
	var first *lc.Condition
	done := 0
	for _, t := range r.steps {
		c := r.current[t]
		if c.Status == corev1.ConditionTrue {
			done++
		} else if first == nil {
			first = c
		}
	}
	return first, done
}

// SameConditions tells whether two condition lists are the same, in the same order, with equal
// transition times.
func SameConditions(a, b lc.Conditions) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Type != y.Type || x.Status != y.Status || x.Reason != y.Reason || x.Severity != y.Severity ||
			x.Message != y.Message || !x.LastTransitionTime.Equal(&y.LastTransitionTime) {
			return false
		}
	}
	return true
}

// truncate cuts a message to MaxMessageLength bytes on a rune boundary.
func truncate(s string) string {
	if len(s) <= MaxMessageLength {
		return s
	}
	const ellipsis = "…"
	cut := MaxMessageLength - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}
