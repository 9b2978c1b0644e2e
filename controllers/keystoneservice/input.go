package keystoneservice

import (
	"context"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	ctrl "sigs.k8s.io/controller-runtime"
)

// reconcileInput marks InputReady (inputVerdict): the service user's password and the
// admin's.
func (r *Reconciler) reconcileInput(ctx context.Context, s *scope) (ctrl.Result, error) {
	step := keystonev1.KeystoneServiceInputReady
	spec := s.service.Spec
	secret, err := s.Password(ctx, r.Client, step, s.service.Namespace, spec.Secret, spec.PasswordSelector)
	if err != nil || secret == nil {
		return ctrl.Result{}, err
	}
	s.password = string(secret.Data[spec.PasswordSelector])
	s.passwordVersion = string(secret.UID) + "/" + secret.ResourceVersion + "#" + spec.PasswordSelector
	if ok, err := s.Open(ctx, r.Client, step, s.API); err != nil || !ok {
		return ctrl.Result{}, err
	}
	s.Round.Apply(step, inputVerdict(s.service, s.API))
	return ctrl.Result{}, nil
}
