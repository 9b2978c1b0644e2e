package keystoneservice

import (
	"context"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	ctrl "sigs.k8s.io/controller-runtime"
)

// reconcileInput marks InputReady: the service user's password and the admin's.
func (r *Reconciler) reconcileInput(ctx context.Context, s *scope) (ctrl.Result, error) {
	step := keystonev1.KeystoneServiceInputReady
	spec := s.service.Spec
	secret, err := s.Password(ctx, r.Client, step, s.service.Namespace, spec.Secret, spec.PasswordSelector)
	if err != nil || secret == nil {
		return ctrl.Result{}, err
	}
	s.password = string(secret.Data[spec.PasswordSelector])
	s.passwordVersion = string(secret.UID) + "/" + secret.ResourceVersion
	if ok, err := s.Open(ctx, r.Client, step, s.API); err != nil || !ok {
		return ctrl.Result{}, err
	}
	if spec.ServiceUser == s.API.Spec.AdminUser {
		s.Round.MarkFalse(step, condition.InvalidInput, "serviceUser %s is the admin user of KeystoneAPI %s; a service needs a user of its own",
			spec.ServiceUser, s.API.Name)
		return ctrl.Result{}, nil
	}
	s.Round.MarkTrue(step, "password of user %s found in secret %s", spec.ServiceUser, spec.Secret)
	return ctrl.Result{}, nil
}
