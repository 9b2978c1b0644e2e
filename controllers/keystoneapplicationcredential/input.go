package keystoneapplicationcredential

import (
	"context"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/controllers/registration"
	"github.com/keystone-stepwise/keystone-operator/internal/access"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	ctrl "sigs.k8s.io/controller-runtime"
)

// reconcileInput marks InputReady: the user is one the namespace's KeystoneAPI lets it
// name (never its admin: a credential is made by logging in as the user, and every
// refused login counts towards Keystone's lockout), and the user's password is there.
func (r *Reconciler) reconcileInput(ctx context.Context, s *scope) (ctrl.Result, error) {
	step := keystonev1.KeystoneApplicationCredentialInputReady
	spec := s.ac.Spec
	others, err := registration.ReadOtherAdmins(ctx, r.Client, s.API)
	if err != nil {
		return ctrl.Result{}, err
	}
	for _, why := range []string{
		registration.UserRefusal(s.API, "spec.userName", spec.UserName),
		registration.PasswordRefusal(s.API, "spec.secret", spec.Secret, spec.PasswordSelector),
		others.Refusal("spec.userName", spec.UserName),
	} {
		if why != "" {
			s.Round.Apply(step, registration.NotAllowedVerdict(why))
			return ctrl.Result{}, nil
		}
	}
	s.otherAdmins = others.IDs
	secret, err := s.Password(ctx, r.Client, step, s.ac.Namespace, spec.Secret, spec.PasswordSelector)
	if err != nil || secret == nil {
		return ctrl.Result{}, err
	}
	s.user = identity.Credentials{URL: s.Admin.URL, User: spec.UserName, Password: string(secret.Data[spec.PasswordSelector]),
		Project: serviceProject, Domain: "Default", CABundle: s.Admin.CABundle,
		Source: access.PasswordSource(secret, spec.PasswordSelector)}
	s.Round.Apply(step, inputVerdict(spec))
	return ctrl.Result{}, nil
}
