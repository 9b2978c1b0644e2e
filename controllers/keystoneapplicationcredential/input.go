package keystoneapplicationcredential

import (
	"context"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	ctrl "sigs.k8s.io/controller-runtime"
)

// reconcileInput marks InputReady: the service user's password.
func (r *Reconciler) reconcileInput(ctx context.Context, s *scope) (ctrl.Result, error) {
	step := keystonev1.KeystoneApplicationCredentialInputReady
	spec := s.ac.Spec
	secret, err := s.Password(ctx, r.Client, step, s.ac.Namespace, spec.Secret, spec.PasswordSelector)
	if err != nil || secret == nil {
		return ctrl.Result{}, err
	}
	s.user = identity.Credentials{URL: s.Admin.URL, User: spec.UserName, Password: string(secret.Data[spec.PasswordSelector]),
		Project: serviceProject, Domain: "Default", CABundle: s.Admin.CABundle}
	s.Round.Apply(step, inputVerdict(spec))
	return ctrl.Result{}, nil
}
