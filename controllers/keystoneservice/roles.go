package keystoneservice

import (
	"context"
	"slices"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	ctrl "sigs.k8s.io/controller-runtime"
)

// reconcileRoles marks RolesReady: every role of the spec exists.
func (r *Reconciler) reconcileRoles(ctx context.Context, s *scope) (ctrl.Result, error) {
	step := keystonev1.KeystoneServiceRolesReady
	ids, changed, err := s.keystone.EnsureRoles(ctx, s.service.Spec.ServiceRoles())
	if err != nil {
		return r.failed(s, step, err)
	}
	s.roleIDs = ids
	s.Mark(ctx, step, changed, condition.TrueVerdict("roles %v exist", s.service.Spec.ServiceRoles()))
	return ctrl.Result{}, nil
}

// reconcileAssignment marks RoleAssignmentReady (assignmentVerdict): the user has every
// role on the service project, and, when the user is ours, no other than those of the
// spec, of the KeystoneServices sharing it (shared.go) and of the other regions owning
// it (identity.Owners). A role or project deleted
// since this client looked it up is looked up again, once.
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
		// and the other regions' owners of record theirs.
		roles = rolesOf(s.service, sharers)
		for _, role := range s.user.Owners.Roles() {
			if !slices.Contains(roles, role) {
				roles = append(roles, role)
			}
		}
		slices.Sort(roles)
		if slices.ContainsFunc(roles, func(name string) bool { return s.roleIDs[name] == "" }) {
			// A sharer's role this round has not looked up (its KeystoneService made it).
			if s.roleIDs, _, err = s.keystone.EnsureRoles(ctx, roles); err != nil {
				return r.failed(s, step, err)
			}
		}
	}
	changed, err := r.assign(ctx, s, roles, exclusive)
	if identity.Stale(err) {
		if s.projectID, _, err = s.keystone.EnsureProject(ctx, defaultDomainID, ServiceProject); err == nil {
			if s.roleIDs, _, err = s.keystone.EnsureRoles(ctx, roles); err == nil {
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
