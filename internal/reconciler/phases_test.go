package reconciler

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	ctrl "sigs.k8s.io/controller-runtime"
)

const (
	stepA lc.Type = "AReady"
	stepB lc.Type = "BReady"
	stepC lc.Type = "CReady"
)

var testSteps = condition.Steps{stepA, stepB, stepC}

func TestRunPhases(t *testing.T) {
	errBoom := errors.New("boom")
	done := func(step lc.Type) Phase[*condition.Round] {
		return Phase[*condition.Round]{Step: step, Run: func(_ context.Context, r *condition.Round) (ctrl.Result, error) {
			r.MarkTrue(step, "done")
			return ctrl.Result{}, nil
		}}
	}
	waiting := func(step lc.Type) Phase[*condition.Round] {
		return Phase[*condition.Round]{Step: step, Run: func(_ context.Context, r *condition.Round) (ctrl.Result, error) {
			r.MarkFalse(step, condition.Created, "running")
			return ctrl.Result{}, nil
		}}
	}
	doneOnly := Phase[*condition.Round]{Step: stepB, Run: func(_ context.Context, r *condition.Round) (ctrl.Result, error) {
		r.MarkDone(stepB, condition.Created, "created, confirmed next round")
		return ctrl.Result{}, nil
	}}
	requeueIn := func(step lc.Type, d time.Duration) Phase[*condition.Round] {
		return Phase[*condition.Round]{Step: step, Run: func(_ context.Context, r *condition.Round) (ctrl.Result, error) {
			r.MarkTrue(step, "done")
			return ctrl.Result{RequeueAfter: d}, nil
		}}
	}
	failing := Phase[*condition.Round]{Step: stepB, Run: func(context.Context, *condition.Round) (ctrl.Result, error) { return ctrl.Result{}, errBoom }}
	requeue := Phase[*condition.Round]{Step: stepB, Run: func(_ context.Context, r *condition.Round) (ctrl.Result, error) {
		r.MarkTrue(stepB, "done, check again later")
		return ctrl.Result{RequeueAfter: time.Minute}, nil
	}}

	observing := func(step lc.Type) Phase[*condition.Round] {
		return Phase[*condition.Round]{Step: step, Observes: true, Run: func(_ context.Context, r *condition.Round) (ctrl.Result, error) {
			if waiting := r.WaitingFor(step); waiting != "" {
				r.MarkTrue(step, "observed while waiting for %s", waiting)
				return ctrl.Result{RequeueAfter: 2 * time.Minute}, nil
			}
			r.MarkTrue(step, "done")
			return ctrl.Result{}, nil
		}}
	}

	halting := Phase[*condition.Round]{Step: stepA, Run: func(_ context.Context, r *condition.Round) (ctrl.Result, error) {
		r.MarkFalse(stepA, condition.InvalidInput, "not this object's to run")
		r.Halt()
		return ctrl.Result{}, nil
	}}

	tests := []struct {
		name    string
		skip    []lc.Type
		phases  []Phase[*condition.Round]
		wantErr error
		wantRes ctrl.Result
		ran     []lc.Type
	}{
		{"all done", nil, []Phase[*condition.Round]{done(stepA), done(stepB), done(stepC)}, nil, ctrl.Result{}, []lc.Type{stepA, stepB, stepC}},
		{"waits at a wait", nil, []Phase[*condition.Round]{done(stepA), waiting(stepB), done(stepC)}, nil, ctrl.Result{}, []lc.Type{stepA}},
		{"waits after an error", nil, []Phase[*condition.Round]{done(stepA), failing, done(stepC)}, errBoom, ctrl.Result{}, []lc.Type{stepA}},
		{"goes on after a requeue", nil, []Phase[*condition.Round]{done(stepA), requeue, done(stepC)}, nil, ctrl.Result{RequeueAfter: time.Minute}, []lc.Type{stepA, stepB, stepC}},
		{"goes on after a step marked done", nil, []Phase[*condition.Round]{done(stepA), doneOnly, done(stepC)}, nil, ctrl.Result{}, []lc.Type{stepA, stepC}},
		{"passes over skipped steps", []lc.Type{stepB}, []Phase[*condition.Round]{done(stepA), failing, done(stepC)}, nil, ctrl.Result{}, []lc.Type{stepA, stepC}},
		{"observes behind a wait", nil, []Phase[*condition.Round]{done(stepA), waiting(stepB), observing(stepC)}, nil,
			ctrl.Result{RequeueAfter: 2 * time.Minute}, []lc.Type{stepA, stepC}},
		{"observes after an error", nil, []Phase[*condition.Round]{done(stepA), failing, observing(stepC)}, errBoom,
			ctrl.Result{RequeueAfter: 2 * time.Minute}, []lc.Type{stepA, stepC}},
		{"a halt stops observers too", nil, []Phase[*condition.Round]{halting, observing(stepB), observing(stepC)}, nil,
			ctrl.Result{}, nil},
		{"keeps the sooner requeue", nil, []Phase[*condition.Round]{requeueIn(stepA, time.Hour), requeueIn(stepB, time.Minute), requeueIn(stepC, 0)}, nil,
			ctrl.Result{RequeueAfter: time.Minute}, []lc.Type{stepA, stepB, stepC}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			r := testSteps.Without(tt.skip...).Begin(nil, time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC))
			res, err := RunPhases(context.Background(), r, r, tt.phases)
			if tt.wantErr == nil {
				g.Expect(err).NotTo(HaveOccurred())
			} else {
				g.Expect(err).To(MatchError(tt.wantErr))
			}
			g.Expect(res).To(Equal(tt.wantRes))
			var ran []lc.Type
			for _, s := range r.Steps() {
				if r.IsTrue(s) {
					ran = append(ran, s)
				}
			}
			g.Expect(ran).To(Equal(tt.ran))
		})
	}
}

func TestRunPhasesReports(t *testing.T) {
	const summary lc.Type = "DependentsReady"
	report := Phase[*condition.Round]{Run: func(_ context.Context, r *condition.Round) (ctrl.Result, error) {
		r.Report(summary, condition.TrueVerdict("every dependent ready"))
		return ctrl.Result{}, nil
	}}
	wait := Phase[*condition.Round]{Step: stepA, Run: func(_ context.Context, r *condition.Round) (ctrl.Result, error) {
		r.MarkFalse(stepA, condition.Requested, "waiting")
		return ctrl.Result{}, errors.New("boom")
	}}
	halt := Phase[*condition.Round]{Step: stepA, Run: func(_ context.Context, r *condition.Round) (ctrl.Result, error) {
		r.MarkFalse(stepA, condition.InvalidInput, "not ours")
		r.Halt()
		return ctrl.Result{}, nil
	}}
	tests := []struct {
		name     string
		phases   []Phase[*condition.Round]
		reported bool
	}{
		{"runs behind a wait and after an error", []Phase[*condition.Round]{wait, report}, true},
		{"not after a halt", []Phase[*condition.Round]{halt, report}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			r := testSteps.Begin(nil, time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC))
			_, _ = RunPhases(context.Background(), r, r, tt.phases)
			conditions := r.Finish(nil).Conditions
			g.Expect(conditions.Get(summary) != nil).To(Equal(tt.reported))
		})
	}
}
