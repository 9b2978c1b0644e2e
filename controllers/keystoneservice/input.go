package keystoneservice

import (
	"context"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/controllers/registration"
	"github.com/keystone-stepwise/keystone-operator/internal/access"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	ctrl "sigs.k8s.io/controller-runtime"
)

// reconcileInput marks InputReady (inputVerdict): what the spec asks for is what the
// namespace's KeystoneAPI allows, and the service user's password and the admin's are
// there. Where the KeystoneAPI lets no role be created, the roles asked for must exist
// (looked up, nothing written).
func (r *Reconciler) reconcileInput(ctx context.Context, s *scope) (ctrl.Result, error) {
	step := keystonev1.KeystoneServiceInputReady
	spec := s.service.Spec
	others, err := registration.ReadOtherAdmins(ctx, r.Client, s.API)
	if err != nil {
		return ctrl.Result{}, err
	}
	if v := inputVerdict(s.service, s.API, others); !v.True {
		s.Round.Apply(step, v)
		return ctrl.Result{}, nil
	}
	s.otherAdmins = others.IDs
	secret, err := s.Password(ctx, r.Client, step, s.service.Namespace, spec.Secret, spec.PasswordSelector)
	if err != nil || secret == nil {
		return ctrl.Result{}, err
	}
	s.password = string(secret.Data[spec.PasswordSelector])
	s.passwordVersion = access.PasswordSource(secret, spec.PasswordSelector)
	if ok, err := s.Open(ctx, r.Client, step, s.API); err != nil || !ok {
		return ctrl.Result{}, err
	}
	if !s.API.Policy().MayCreateRoles() {
		kc, err := r.Keystone.Get(ctx, s.Admin)
		if err != nil {
			return r.failed(s, step, err)
		}
		if _, _, refused, err := ensureRoles(ctx, s, kc, step, false); err != nil || refused {
			if err != nil {
				return r.failed(s, step, err)
			}
			return ctrl.Result{}, nil
		}
	}
	s.Round.Apply(step, condition.TrueVerdict("password of user %s found in secret %s", spec.ServiceUser, spec.Secret))
	return ctrl.Result{}, nil
}
