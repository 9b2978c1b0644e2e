package condition

import (
	"context"

	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Phase is one step of a reconcile: Run marks the condition Step (and may mark the
// ones after it that it also owns).
type Phase[S any] struct {
	Step lc.Type
	Run  func(ctx context.Context, s S) (ctrl.Result, error)
}

// RunPhases runs the phases in order and stops at the first one that failed, asked
// for a requeue, or left its step neither True nor done (MarkDone): a real wait.
// Phases whose step is not applicable in round are passed over.
func RunPhases[S any](ctx context.Context, round *Round, s S, phases []Phase[S]) (ctrl.Result, error) {
	for _, p := range phases {
		if round.current[p.Step] == nil {
			continue
		}
		res, err := p.Run(ctx, s)
		if err != nil || !res.IsZero() || (!round.IsTrue(p.Step) && !round.done[p.Step]) {
			return res, err
		}
	}
	return ctrl.Result{}, nil
}
