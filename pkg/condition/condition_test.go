package condition

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
)

const (
	stepA lc.Type = "AReady"
	stepB lc.Type = "BReady"
	stepC lc.Type = "CReady"
)

var (
	testSteps = Steps{stepA, stepB, stepC}
	t0        = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	t1        = t0.Add(time.Minute)
)

// brief is the part of a condition a table compares.
type brief struct {
	Type     lc.Type
	Status   corev1.ConditionStatus
	Reason   lc.Reason
	Severity lc.Severity
	Message  string
}

func briefs(cs lc.Conditions) []brief {
	out := make([]brief, 0, len(cs))
	for _, c := range cs {
		out = append(out, brief{c.Type, c.Status, c.Reason, c.Severity, c.Message})
	}
	return out
}

func TestRoundFinish(t *testing.T) {
	tests := []struct {
		name string
		skip []lc.Type
		mark func(r *Round)
		err  error
		want []brief
	}{
		{
			name: "nothing marked: Ready False/Info from the first step, later steps wait for it",
			mark: func(*Round) {},
			want: []brief{
				{ReadyCondition, corev1.ConditionFalse, InitReason, lc.SeverityInfo, "AReady (0/3 ready): not evaluated yet"},
				{stepA, corev1.ConditionUnknown, InitReason, "", "not evaluated yet"},
				{stepB, corev1.ConditionUnknown, InitReason, "", "waiting for AReady"},
				{stepC, corev1.ConditionUnknown, InitReason, "", "waiting for AReady"},
				{ReconcilingCondition, corev1.ConditionTrue, InitReason, "", "AReady (0/3 ready): not evaluated yet"},
			},
		},
		{
			name: "all steps True: Ready True, no Reconciling",
			mark: func(r *Round) {
				r.MarkTrue(stepA, "a done")
				r.MarkTrue(stepB, "b done")
				r.MarkTrue(stepC, "c done")
			},
			want: []brief{
				{ReadyCondition, corev1.ConditionTrue, ReadyReason, "", "all 3 steps ready"},
				{stepA, corev1.ConditionTrue, ReadyReason, "", "a done"},
				{stepB, corev1.ConditionTrue, ReadyReason, "", "b done"},
				{stepC, corev1.ConditionTrue, ReadyReason, "", "c done"},
			},
		},
		{
			name: "blocking step waiting: Ready takes its reason and severity and counts progress",
			mark: func(r *Round) {
				r.MarkTrue(stepA, "a done")
				r.MarkFalse(stepB, Created, "job %s running", "b-1")
			},
			want: []brief{
				{ReadyCondition, corev1.ConditionFalse, "Created", lc.SeverityInfo, "BReady (1/3 ready): job b-1 running"},
				{stepA, corev1.ConditionTrue, ReadyReason, "", "a done"},
				{stepB, corev1.ConditionFalse, "Created", lc.SeverityInfo, "job b-1 running"},
				{stepC, corev1.ConditionUnknown, InitReason, "", "waiting for BReady"},
				{ReconcilingCondition, corev1.ConditionTrue, "Created", "", "BReady (1/3 ready): job b-1 running"},
			},
		},
		{
			name: "a step with severity Error stalls the object",
			mark: func(r *Round) {
				r.MarkTrue(stepA, "a done")
				r.MarkFalse(stepB, CreationFailed, "job b-1 failed")
			},
			want: []brief{
				{ReadyCondition, corev1.ConditionFalse, lc.CreationFailedReason, lc.SeverityError, "BReady (1/3 ready): job b-1 failed"},
				{stepA, corev1.ConditionTrue, ReadyReason, "", "a done"},
				{stepB, corev1.ConditionFalse, lc.CreationFailedReason, lc.SeverityError, "job b-1 failed"},
				{stepC, corev1.ConditionUnknown, InitReason, "", "waiting for BReady"},
				{StalledCondition, corev1.ConditionTrue, lc.CreationFailedReason, "", "BReady: job b-1 failed"},
			},
		},
		{
			name: "Ready names the first step that is not True even when a later one is",
			mark: func(r *Round) {
				r.MarkFalse(stepA, DependencyNotFound, "secret x not found")
				r.MarkTrue(stepC, "c done")
			},
			want: []brief{
				{ReadyCondition, corev1.ConditionFalse, "DependencyNotFound", lc.SeverityWarning, "AReady (1/3 ready): secret x not found"},
				{stepA, corev1.ConditionFalse, "DependencyNotFound", lc.SeverityWarning, "secret x not found"},
				{stepB, corev1.ConditionUnknown, InitReason, "", "waiting for AReady"},
				{stepC, corev1.ConditionTrue, ReadyReason, "", "c done"},
				{ReconcilingCondition, corev1.ConditionTrue, "DependencyNotFound", "", "AReady (1/3 ready): secret x not found"},
			},
		},
		{
			name: "skipped steps are left out and do not count",
			skip: []lc.Type{stepB},
			mark: func(r *Round) {
				r.MarkTrue(stepA, "a done")
				r.MarkTrue(stepC, "c done")
			},
			want: []brief{
				{ReadyCondition, corev1.ConditionTrue, ReadyReason, "", "all 2 steps ready"},
				{stepA, corev1.ConditionTrue, ReadyReason, "", "a done"},
				{stepC, corev1.ConditionTrue, ReadyReason, "", "c done"},
			},
		},
		{
			name: "an error before the blocking step was evaluated is a Warning on that step",
			mark: func(r *Round) { r.MarkTrue(stepA, "a done") },
			err:  errors.New("connection refused"),
			want: []brief{
				{ReadyCondition, corev1.ConditionFalse, "ReconcileError", lc.SeverityWarning, "BReady (1/3 ready): connection refused"},
				{stepA, corev1.ConditionTrue, ReadyReason, "", "a done"},
				{stepB, corev1.ConditionFalse, "ReconcileError", lc.SeverityWarning, "connection refused"},
				{stepC, corev1.ConditionUnknown, InitReason, "", "waiting for BReady"},
				{ReconcilingCondition, corev1.ConditionTrue, "ReconcileError", "", "BReady (1/3 ready): connection refused"},
			},
		},
		{
			name: "an error does not override what the blocking step reported",
			mark: func(r *Round) { r.MarkFalse(stepA, ServiceUnavailable, "keystone answered 503") },
			err:  errors.New("keystone answered 503"),
			want: []brief{
				{ReadyCondition, corev1.ConditionFalse, "ServiceUnavailable", lc.SeverityWarning, "AReady (0/3 ready): keystone answered 503"},
				{stepA, corev1.ConditionFalse, "ServiceUnavailable", lc.SeverityWarning, "keystone answered 503"},
				{stepB, corev1.ConditionUnknown, InitReason, "", "waiting for AReady"},
				{stepC, corev1.ConditionUnknown, InitReason, "", "waiting for AReady"},
				{ReconcilingCondition, corev1.ConditionTrue, "ServiceUnavailable", "", "AReady (0/3 ready): keystone answered 503"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			r := testSteps.Without(tt.skip...).Begin(nil, t0)
			tt.mark(r)
			out := r.Finish(tt.err)
			g.Expect(briefs(out.Conditions)).To(Equal(tt.want))
			g.Expect(out.Changed).To(BeTrue())
			g.Expect(out.Stalled).To(Equal(out.Conditions.Has(StalledCondition)))
		})
	}
}

func TestBeginReinitialisesEveryStep(t *testing.T) {
	g := NewWithT(t)
	prev := testSteps.Begin(nil, t0)
	prev.MarkTrue(stepA, "a done")
	prev.MarkTrue(stepB, "b done")
	saved := prev.Finish(nil).Conditions

	r := testSteps.Begin(saved, t1)
	for _, s := range testSteps {
		g.Expect(r.Get(s).Status).To(Equal(corev1.ConditionUnknown), "step %s", s)
		g.Expect(r.Get(s).Reason).To(Equal(InitReason))
	}
	g.Expect(r.IsTrue(stepA)).To(BeFalse(), "nothing from a previous reconcile is trusted")
	g.Expect(testSteps.Without(stepB).Begin(saved, t1).Get(stepB)).To(BeNil())
}

func TestTransitionTimes(t *testing.T) {
	g := NewWithT(t)
	first := testSteps.Begin(nil, t0)
	first.MarkTrue(stepA, "a done")
	first.MarkFalse(stepB, Created, "job running")
	saved := first.Finish(nil).Conditions
	for _, c := range saved {
		g.Expect(c.LastTransitionTime.Time).To(Equal(t0), "new condition %s gets the round's time", c.Type)
	}

	second := testSteps.Begin(saved, t1)
	second.MarkTrue(stepA, "a done, again")
	second.MarkFalse(stepB, CreationFailed, "job failed")
	out := second.Finish(nil)
	byType := map[lc.Type]lc.Condition{}
	for _, c := range out.Conditions {
		byType[c.Type] = c
	}
	g.Expect(byType[stepA].LastTransitionTime.Time).To(Equal(t0), "status True→True keeps its time though the message changed")
	g.Expect(byType[stepB].LastTransitionTime.Time).To(Equal(t0), "status False→False keeps its time though the reason changed")
	g.Expect(byType[ReadyCondition].LastTransitionTime.Time).To(Equal(t0))
	g.Expect(byType[StalledCondition].LastTransitionTime.Time).To(Equal(t1), "a new condition transitions now")

	third := testSteps.Begin(out.Conditions, t1.Add(time.Minute))
	third.MarkTrue(stepA, "a done")
	third.MarkTrue(stepB, "b done")
	third.MarkTrue(stepC, "c done")
	for _, c := range third.Finish(nil).Conditions {
		want := t1.Add(time.Minute)
		if c.Type == stepA {
			want = t0
		}
		g.Expect(c.LastTransitionTime.Time).To(Equal(want), "%s", c.Type)
	}
}

func TestConvergedRoundChangesNothing(t *testing.T) {
	g := NewWithT(t)
	mark := func(r *Round) {
		r.MarkTrue(stepA, "a done")
		r.MarkTrue(stepB, "b done")
		r.MarkTrue(stepC, "c done")
	}
	r := testSteps.Begin(nil, t0)
	mark(r)
	saved := r.Finish(nil).Conditions

	again := testSteps.Begin(saved, t1)
	mark(again)
	out := again.Finish(nil)
	g.Expect(out.Changed).To(BeFalse())
	g.Expect(out.Transitions).To(BeEmpty())
	g.Expect(SameConditions(out.Conditions, saved)).To(BeTrue())
}

func TestTransitions(t *testing.T) {
	g := NewWithT(t)
	first := testSteps.Begin(nil, t0)
	first.MarkFalse(stepA, Requested, "db requested")
	created := first.Finish(nil)
	var types []lc.Type
	for _, tr := range created.Transitions {
		types = append(types, tr.Type)
	}
	g.Expect(types).To(ConsistOf(ReadyCondition, stepA), "steps that appear Unknown have not happened yet")
	saved := created.Conditions

	second := testSteps.Begin(saved, t1)
	second.MarkFalse(stepA, Requested, "db still requested, new message")
	out := second.Finish(nil)
	g.Expect(out.Transitions).To(BeEmpty(), "a new message alone is not a transition")

	third := testSteps.Begin(saved, t1)
	third.MarkFalse(stepA, DependencyNotFound, "db gone")
	out = third.Finish(nil)
	types = nil
	for _, tr := range out.Transitions {
		types = append(types, tr.Type)
		if tr.Type == stepA {
			g.Expect(tr.Warning()).To(BeTrue())
		}
	}
	g.Expect(types).To(ConsistOf(ReadyCondition, stepA), "Reconciling repeats Ready")
}

func TestMirror(t *testing.T) {
	tests := []struct {
		name  string
		other lc.Conditions
		want  brief
	}{
		{"no status yet", nil, brief{stepA, corev1.ConditionFalse, lc.RequestedReason, lc.SeverityInfo, "MariaDBDatabase keystone: waiting for its status"}},
		{"ready", lc.Conditions{*lc.TrueCondition(lc.ReadyCondition, "Setup complete")},
			brief{stepA, corev1.ConditionTrue, ReadyReason, "", "MariaDBDatabase keystone is ready"}},
		{"failing with a severity", lc.Conditions{*lc.FalseCondition(lc.ReadyCondition, lc.ErrorReason, lc.SeverityWarning, "galera down")},
			brief{stepA, corev1.ConditionFalse, lc.ErrorReason, lc.SeverityWarning, "MariaDBDatabase keystone: galera down"}},
		{"unknown without severity is waiting", lc.Conditions{*lc.UnknownCondition(lc.ReadyCondition, lc.InitReason, "starting")},
			brief{stepA, corev1.ConditionFalse, lc.InitReason, lc.SeverityInfo, "MariaDBDatabase keystone: starting"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			r := testSteps.Begin(nil, t0)
			r.Apply(stepA, Mirror("MariaDBDatabase", Of("keystone", tt.other)))
			c := r.Get(stepA)
			g.Expect(brief{c.Type, c.Status, c.Reason, c.Severity, c.Message}).To(Equal(tt.want))
		})
	}
}

func TestMirrorSteady(t *testing.T) {
	g0 := NewWithT(t)
	g0.Expect([]int{SeverityRank(lc.SeverityError), SeverityRank(lc.SeverityWarning), SeverityRank(lc.SeverityInfo), SeverityRank("")}).To(Equal([]int{2, 1, 0, 0}))
	g := NewWithT(t)
	progress := func(message string) lc.Conditions {
		return lc.Conditions{*lc.FalseCondition(lc.ReadyCondition, lc.RequestedReason, lc.SeverityInfo, "%s", message)}
	}
	mirrored := func(other lc.Conditions) brief {
		r := testSteps.Begin(nil, t0)
		r.Apply(stepA, Mirror("KeystoneAPI", Of("keystone", other), Steady()))
		c := r.Get(stepA)
		return brief{c.Type, c.Status, c.Reason, c.Severity, c.Message}
	}
	first, later := progress("DBReady (2/9): database being created"), progress("DBSyncReady (5/9): db-sync job running")
	g.Expect(mirrored(first)).To(Equal(brief{stepA, corev1.ConditionFalse, lc.RequestedReason, lc.SeverityInfo, "KeystoneAPI keystone is not ready yet"}))
	g.Expect(mirrored(later)).To(Equal(mirrored(first)), "progress alone changes nothing here")
	g.Expect(MirrorKey(Of("keystone", later), Steady())).To(Equal(MirrorKey(Of("keystone", first), Steady())), "nor wakes a mirror")

	failing := lc.Conditions{*lc.FalseCondition(lc.ReadyCondition, "DependencyNotFound", lc.SeverityWarning, "InputReady (1/9): secret osp-secret not found")}
	g.Expect(mirrored(failing).Message).To(Equal("KeystoneAPI keystone: InputReady (1/9): secret osp-secret not found"), "a failure keeps its message")
	other := lc.Conditions{*lc.FalseCondition(lc.ReadyCondition, "DependencyNotFound", lc.SeverityWarning, "InputReady (1/9): key AdminPassword missing")}
	g.Expect(MirrorKey(Of("keystone", other), Steady())).NotTo(Equal(MirrorKey(Of("keystone", failing), Steady())), "a failure's new message wakes mirrors")
	g.Expect(mirrored(lc.Conditions{*lc.TrueCondition(lc.ReadyCondition, "ok")}).Status).To(Equal(corev1.ConditionTrue))
	g.Expect(MirrorKey(nil, Steady())).To(BeEmpty())
	g.Expect(MirrorKey(Of("keystone", nil), Steady())).To(BeEmpty(), "no Ready yet")
	g.Expect(MirrorKey(Of("keystone", later))).NotTo(Equal(MirrorKey(Of("keystone", first))), "without Steady, progress counts")
}

func TestMessagesAreBounded(t *testing.T) {
	g := NewWithT(t)
	r := testSteps.Begin(nil, t0)
	r.MarkFalse(stepA, CreationFailed, "%s", strings.Repeat("é", 2000))
	for _, c := range r.Finish(nil).Conditions {
		g.Expect(len(c.Message)).To(BeNumerically("<=", MaxMessageLength), "%s", c.Type)
		g.Expect(utf8.ValidString(c.Message)).To(BeTrue())
	}
}

func TestMarkingAnUndeclaredStepPanics(t *testing.T) {
	g := NewWithT(t)
	r := testSteps.Without(stepC).Begin(nil, t0)
	g.Expect(func() { r.MarkTrue(stepC, "skipped step") }).To(Panic())
	g.Expect(func() { r.MarkTrue("Other", "undeclared") }).To(Panic())
}

func TestMarkDone(t *testing.T) {
	g := NewWithT(t)
	r := testSteps.Begin(nil, t0)
	r.MarkTrue(stepA, "a done")
	r.MarkDone(stepB, Created, "created b-1")
	r.MarkTrue(stepC, "c done")
	g.Expect(r.Unconfirmed()).To(BeTrue())
	out := r.Finish(nil)
	g.Expect(briefs(out.Conditions)[:3]).To(Equal([]brief{
		{ReadyCondition, corev1.ConditionFalse, "Created", lc.SeverityInfo, "BReady (2/3 ready): created b-1"},
		{stepA, corev1.ConditionTrue, ReadyReason, "", "a done"},
		{stepB, corev1.ConditionFalse, "Created", lc.SeverityInfo, "created b-1"},
	}))
	r2 := testSteps.Begin(out.Conditions, t1)
	r2.MarkDone(stepB, Created, "created")
	r2.MarkTrue(stepB, "b confirmed")
	g.Expect(r2.Unconfirmed()).To(BeFalse(), "a later mark replaces MarkDone")
	g.Expect(func() { r2.MarkDone(stepA, CreationFailed, "x") }).To(Panic(), "only Info reasons")
}

func TestCatalogue(t *testing.T) {
	g := NewWithT(t)
	c := Catalogue{"WidgetFailed": lc.SeverityError, "WidgetCreated": lc.SeverityInfo}
	g.Expect(c.Reason("WidgetFailed")).To(Equal(Reason{Name: "WidgetFailed", Severity: lc.SeverityError}))
	g.Expect(c.Reason("WidgetCreated")).To(Equal(Reason{Name: "WidgetCreated", Severity: lc.SeverityInfo}))
	g.Expect(func() { c.Reason("WidgetFiled") }).To(PanicWith("condition: reason WidgetFiled is not in the catalogue"))
}

func TestApplyVerdict(t *testing.T) {
	g := NewWithT(t)
	r := testSteps.Begin(nil, t0)
	r.Apply(stepA, TrueVerdict("done %d", 1))
	r.Apply(stepB, FalseVerdict(CreationFailed, "failed %s", "hard"))
	g.Expect(r.Unconfirmed()).To(BeFalse())
	r.Apply(stepC, DoneVerdict(Created, "made %s", "it"))
	g.Expect(briefs(lc.Conditions{*r.Get(stepA), *r.Get(stepB), *r.Get(stepC)})).To(Equal([]brief{
		{stepA, corev1.ConditionTrue, ReadyReason, "", "done 1"},
		{stepB, corev1.ConditionFalse, CreationFailed.Name, lc.SeverityError, "failed hard"},
		{stepC, corev1.ConditionFalse, Created.Name, lc.SeverityInfo, "made it"},
	}))
	g.Expect(r.Unconfirmed()).To(BeTrue(), "a done verdict is confirmed by the next round")
	g.Expect(func() { r.Apply(stepC, DoneVerdict(CreationFailed, "x")) }).To(PanicWith(ContainSubstring("MarkDone takes an Info reason")))
}

func TestReport(t *testing.T) {
	g := NewWithT(t)
	const summary lc.Type = "DependentsReady"
	r := testSteps.Begin(nil, t0)
	r.MarkTrue(stepA, "a done")
	r.MarkTrue(stepB, "b done")
	r.MarkTrue(stepC, "c done")
	r.Report(summary, FalseVerdict(Reason{Name: "UserFailed", Severity: lc.SeverityError}, "first: %s", "glance"))
	r.Report(summary, FalseVerdict(Reason{Name: "UserFailed", Severity: lc.SeverityError}, "glance: refused"))
	out := r.Finish(nil)
	g.Expect(briefs(out.Conditions)).To(Equal([]brief{
		{ReadyCondition, corev1.ConditionTrue, ReadyReason, "", "all 3 steps ready"},
		{stepA, corev1.ConditionTrue, ReadyReason, "", "a done"},
		{stepB, corev1.ConditionTrue, ReadyReason, "", "b done"},
		{stepC, corev1.ConditionTrue, ReadyReason, "", "c done"},
		{summary, corev1.ConditionFalse, "UserFailed", lc.SeverityError, "glance: refused"},
	}), "listed once, after the steps; an Error in it neither blocks Ready nor stalls")
	g.Expect(out.Stalled).To(BeFalse())
	var reported []Transition
	for _, tr := range out.Transitions {
		if tr.Type == summary {
			reported = append(reported, tr)
		}
	}
	g.Expect(reported).To(HaveLen(1), "a report gets its Event as a step does")
	g.Expect(reported[0].Warning()).To(BeTrue())

	again := testSteps.Begin(out.Conditions, t1)
	again.MarkTrue(stepA, "a done")
	again.MarkFalse(stepB, Requested, "b again")
	again.Report(summary, TrueVerdict("all 2 dependents ready"))
	next := again.Finish(nil)
	g.Expect(next.Conditions.Get(summary).Status).To(Equal(corev1.ConditionTrue))
	g.Expect(next.Conditions.Get(summary).LastTransitionTime.Time).To(Equal(t1))
	g.Expect(next.Conditions[len(next.Conditions)-1].Type).To(Equal(ReconcilingCondition), "after the reports")

	dropped := testSteps.Begin(next.Conditions, t1)
	remaining := dropped.Finish(nil).Conditions
	g.Expect(remaining.Get(summary)).To(BeNil(), "not reported this round: not listed")
	g.Expect(func() { dropped.Report(stepA, TrueVerdict("x")) }).To(Panic(), "a step is marked, not reported")
}

func TestCarry(t *testing.T) {
	g := NewWithT(t)
	var t0meta = lc.Condition{}.LastTransitionTime
	t0meta.Time = t0
	const theirs lc.Type = "KeystoneServiceOSServiceReady"
	saved := lc.Conditions{{Type: theirs, Status: corev1.ConditionTrue, Reason: "Ready", Message: "Service created",
		LastTransitionTime: t0meta}}
	r := testSteps.Begin(saved, t1)
	r.Carry(theirs)
	r.Carry("NeverSaved")
	r.Carry(stepA)
	g.Expect(r.Carried(theirs)).To(BeTrue())
	g.Expect(r.Carried("NeverSaved")).To(BeFalse(), "nothing to carry")
	g.Expect(r.Carried(stepA)).To(BeFalse(), "a step is marked, not carried")
	out := r.Finish(nil)
	kept := out.Conditions.Get(theirs)
	g.Expect(kept).NotTo(BeNil())
	g.Expect(*kept).To(Equal(saved[0]), "as it was, transition time included")
	g.Expect(out.Conditions.Get(ReadyCondition).Status).To(Equal(corev1.ConditionFalse), "Ready ignores it: steps A to C are not done")

	next := testSteps.Begin(out.Conditions, t1)
	next.Carry(theirs)
	next.Drop(theirs)
	dropped := next.Finish(nil).Conditions
	g.Expect(dropped.Get(theirs)).To(BeNil(), "dropped: gone from the list")
	notCarried := testSteps.Begin(out.Conditions, t1).Finish(nil).Conditions
	g.Expect(notCarried.Get(theirs)).To(BeNil(), "not carried: gone")
}

// TestWaitingFor: a step's actions wait for the first step before it that is not
// True, but for the ones they do not need; Ready still waits for every step.
func TestWaitingFor(t *testing.T) {
	g := NewWithT(t)
	r := testSteps.Begin(nil, t0)
	r.Apply(stepA, TrueVerdict("a"))
	r.Apply(stepB, FalseVerdict(Created, "b running"))
	g.Expect(r.WaitingFor(stepC)).To(Equal(stepB))
	g.Expect(r.WaitingFor(stepC, stepB)).To(BeEmpty(), "C does not need B")
	g.Expect(r.WaitingFor(stepC, stepA)).To(Equal(stepB), "C needs B")
	r.Apply(stepC, TrueVerdict("c"))
	conds := r.Finish(nil).Conditions
	g.Expect(conds.Get(ReadyCondition).Message).To(Equal("BReady (2/3 ready): b running"), "Ready names the first step not True")

	r = testSteps.Begin(nil, t0)
	g.Expect(r.WaitingFor(stepC, stepB)).To(Equal(stepA), "A, not evaluated, is still waited for")
}
