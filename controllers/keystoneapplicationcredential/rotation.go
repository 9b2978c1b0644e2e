package keystoneapplicationcredential

import (
	"context"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
)

// rotationDue is when the current credential is replaced: gracePeriodDays before it expires.
func rotationDue(ac *keystonev1.KeystoneApplicationCredential) time.Time {
	if ac.Status.ExpiresAt == nil {
		return time.Time{}
	}
	return ac.Status.ExpiresAt.Add(-time.Duration(ac.Spec.GracePeriodDays) * day)
}

// reconcileRotation marks ApplicationCredentialRotationReady (rotationVerdict): the next
// replacement is scheduled (a rotation made this round was reported by the credential's
// phase).
func (r *Reconciler) reconcileRotation(_ context.Context, s *scope) (ctrl.Result, error) {
	step := keystonev1.KeystoneApplicationCredentialRotationReady
	if c := s.Round.Get(step); c != nil && c.Reason == rotatedReason.Name {
		return ctrl.Result{}, nil
	}
	due := rotationDue(s.ac)
	s.ac.Status.RotationEligibleAt = &metav1.Time{Time: due}
	var result ctrl.Result
	if wait := due.Sub(r.Clock.Now()); wait > 0 {
		result.RequeueAfter = wait // the rotation
	}
	s.Round.Apply(step, rotationVerdict(s.ac, ""))
	return result, nil
}
