package reconciler

import (
	"context"

	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Phase is one step of a reconcile: Run marks the condition Step (and may mark the
// ones after it that it also owns). A phase without a Step reports a condition that is
// not a step (Round.Report): it runs every round, unless the round halted.
type Phase[S any] struct {
	Step lc.Type
	Run  func(ctx context.Context, s S) (ctrl.Result, error)
	// Observes makes the phase run every round, whatever the steps before it: it reports
	// its objects as it finds them (a Deployment's readiness always comes from the
	// Deployment) and acts only when Round.WaitingFor(Step) is "". A phase that does
	// not observe runs only once every earlier step is True (or done this round).
	Observes bool
}

// RunPhases runs the phases in declared order. A phase that does not observe runs only
// when every step before it is True or done this round, and not after an error; an
// observing phase always runs, unless an earlier phase halted the round (Round.Halt).
// Phases whose step is not applicable are passed over.
// The first error is returned; requests to requeue are merged (the soonest wins): a
// phase's result is the only way a round asks for another (a time-based step returns
// when it is due; what cannot be watched, when to look again).
func RunPhases[S any](ctx context.Context, round *condition.Round, s S, phases []Phase[S]) (ctrl.Result, error) {
	var result ctrl.Result
	var firstErr error
	for _, p := range phases {
		if round.Halted() {
			break
		}
		switch {
		case p.Step == "":
		case !round.Applies(p.Step):
			continue
		case !p.Observes && (firstErr != nil || round.WaitingFor(p.Step) != ""):
			continue
		}
		res, err := p.Run(ctx, s)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		result = MergeResults(result, res)
	}
	return result, firstErr
}

// MergeResults keeps the sooner of two requests to reconcile again.
func MergeResults(a, b ctrl.Result) ctrl.Result {
	out := ctrl.Result{Requeue: a.Requeue || b.Requeue, RequeueAfter: a.RequeueAfter}
	if b.RequeueAfter > 0 && (out.RequeueAfter == 0 || b.RequeueAfter < out.RequeueAfter) {
		out.RequeueAfter = b.RequeueAfter
	}
	return out
}
