package registration

import (
	"time"

	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	ctrl "sigs.k8s.io/controller-runtime"
)

// ConfirmInterval is how soon what a round wrote to Keystone is read back to confirm
// it: Keystone cannot be watched.
const ConfirmInterval = 200 * time.Millisecond

// DefaultConcurrency is how many objects of each registering kind reconcile at once
// unless the manager says otherwise (--registration-concurrency): registrations wait
// on Keystone and the API server, not on the CPU. Chosen by make bench (BENCHMARKS.md,
// throughput): 1,000 registrations took the same time with 4, 8 and 16, and more at once
// only made their finalizer patches on the shared KeystoneAPI conflict more often.
const DefaultConcurrency = 4

// Concurrency is n, or DefaultConcurrency when n is not positive.
func Concurrency(n int) int {
	if n <= 0 {
		return DefaultConcurrency
	}
	return n
}

// ConfirmLater asks for a round after ConfirmInterval when this one wrote to Keystone
// (a step marked done, not yet confirmed); the last phase of a kind returns it.
func ConfirmLater(round *condition.Round) ctrl.Result {
	if round.Unconfirmed() {
		return ctrl.Result{RequeueAfter: ConfirmInterval}
	}
	return ctrl.Result{}
}
