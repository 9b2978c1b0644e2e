package keystoneservice

import (
	"context"
	"errors"
	"slices"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/controllers/registration"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	ctrl "sigs.k8s.io/controller-runtime"
)

// reconcileRoles marks RolesReady: every role of the spec exists, created when missing
// where the KeystoneAPI lets its namespace create roles (InputReady refused the spec
// otherwise; one deleted since is NotAllowed here).
func (r *Reconciler) reconcileRoles(ctx context.Context, s *scope) (ctrl.Result, error) {
	step := keystonev1.KeystoneServiceRolesReady
	ids, changed, refused, err := ensureRoles(ctx, s, s.keystone, step, s.API.Policy().MayCreateRoles())
	if err != nil {
		return r.failed(s, step, err)
	}
	if refused {
		return ctrl.Result{}, nil
	}
	s.roleIDs = ids
	s.Mark(ctx, step, changed, condition.TrueVerdict("roles %v exist", s.service.Spec.ServiceRoles()))
	return ctrl.Result{}, nil
}

// ensureRoles looks the spec's roles up as kc and, with create, creates those Keystone
// lacks; where it may not, it marks step NotAllowed, and refused says so.
func ensureRoles(ctx context.Context, s *scope, kc *identity.Client, step lc.Type, create bool) (
	ids map[string]string, changed, refused bool, err error) {
	ids, changed, err = kc.EnsureRoles(ctx, s.service.Spec.ServiceRoles(), create)
	var missing *identity.MissingRolesError
	if errors.As(err, &missing) {
		s.Round.Apply(step, registration.NotAllowedVerdict(registration.MissingRolesRefusal(s.API, missing.Roles)))
		return nil, false, true, nil
	}
	return ids, changed, false, err
}

// reconcileAssignment marks RoleAssignmentReady (assignmentVerdict): the user has every
// role on the service project, and, when the user is ours, no other than those of the
// spec, of the KeystoneServices sharing it (shared.go) and of the other regions owning
// it (identity.Owners); a sharer's role the KeystoneAPI does not allow is not given. A
// role or project deleted since this client looked it up is looked up again, once.
func (r *Reconciler) reconcileAssignment(ctx context.Context, s *scope) (ctrl.Result, error) {
	step := keystonev1.KeystoneServiceRoleAssignmentReady
	roles := s.service.Spec.ServiceRoles()
	// A user of ours has exactly its sharers' roles: one removed from every spec is revoked.
	exclusive := s.user.Ownership == identity.Owned
	if exclusive {
		sharers, err := r.sharers(ctx, s.service, s.service.Spec.ServiceUser)
		if err != nil {
			return ctrl.Result{}, err
		}
		// (as far as the KeystoneAPI allows: a sharer refused a role at its InputReady
		// still names it), and the other regions' owners of record theirs (their own
		// KeystoneAPIs allowed them before they were recorded).
		roles = registration.AllowedRoles(s.API, rolesOf(s.service, sharers))
		for _, role := range s.user.Owners.Roles() {
			if !slices.Contains(roles, role) {
				roles = append(roles, role)
			}
		}
		slices.Sort(roles)
		if slices.ContainsFunc(roles, func(name string) bool { return s.roleIDs[name] == "" }) {
			// A sharer's or region's role this round has not looked up: one Keystone
			// lacks, where no role may be created, is not given.
			ids, _, err := s.keystone.EnsureRoles(ctx, roles, s.API.Policy().MayCreateRoles())
			var missing *identity.MissingRolesError
			if errors.As(err, &missing) {
				roles = slices.DeleteFunc(roles, func(name string) bool { return slices.Contains(missing.Roles, name) })
				ids, _, err = s.keystone.EnsureRoles(ctx, roles, false)
			}
			if err != nil {
				return r.failed(s, step, err)
			}
			s.roleIDs = ids
		}
	}
	changed, err := r.assign(ctx, s, roles, exclusive)
	if identity.Stale(err) {
		if s.projectID, _, err = s.keystone.EnsureProject(ctx, defaultDomainID, ServiceProject); err == nil {
			if s.roleIDs, _, err = s.keystone.EnsureRoles(ctx, roles, s.API.Policy().MayCreateRoles()); err == nil {
				changed, err = r.assign(ctx, s, roles, exclusive)
			}
		}
	}
	if err != nil {
		return r.failed(s, step, err)
	}
	s.Mark(ctx, step, changed, assignmentVerdict(s.service.Spec, exclusive))
	return ctrl.Result{}, nil
}

// assign gives the user roles (and, exclusive, no other).
func (r *Reconciler) assign(ctx context.Context, s *scope, roles []string, exclusive bool) (bool, error) {
	ids := make([]string, 0, len(roles))
	for _, name := range roles {
		ids = append(ids, s.roleIDs[name])
	}
	return s.keystone.EnsureAssignments(ctx, identity.AssignmentSpec{UserID: s.user.ID, ProjectID: s.projectID, RoleIDs: ids,
		Exclusive: exclusive, NewUser: s.user.Created})
}
