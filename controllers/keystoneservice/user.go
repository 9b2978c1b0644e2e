package keystoneservice

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/controllers/registration"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/internal/reconciler"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// recordUser writes UserAnnotation for the user name and drops the records of earlier
// versions, patching the annotations alone.
func (r *Reconciler) recordUser(ctx context.Context, svc *keystonev1.KeystoneService, name string) error {
	return r.annotate(ctx, svc, "recording user "+name, map[string]*string{UserAnnotation: &name,
		legacyUserIDAnnotation: nil, legacyPasswordFromAnnotation: nil})
}

// recordRefusal records tried, the password check Keystone refused, on svc
// (PasswordRefusedAnnotation), when it is not recorded yet.
func (r *Reconciler) recordRefusal(ctx context.Context, svc *keystonev1.KeystoneService, tried string) error {
	if tried == "" || svc.Annotations[PasswordRefusedAnnotation] == tried {
		return nil
	}
	return r.annotate(ctx, svc, "recording the refused password check", map[string]*string{PasswordRefusedAnnotation: &tried})
}

// annotate sets the annotations of changes on svc (nil: removed) with a merge patch of
// its metadata alone, doing what (for the error), and keeps svc as the write left it.
func (r *Reconciler) annotate(ctx context.Context, svc *keystonev1.KeystoneService, what string, changes map[string]*string) error {
	data, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": changes}})
	if err != nil {
		return err
	}
	meta := &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Name: svc.Name, Namespace: svc.Namespace}}
	if err := r.Patch(ctx, meta, client.RawPatch(types.MergePatchType, data)); err != nil {
		return fmt.Errorf("%s on %s: %w", what, svc.Name, err)
	}
	for k, v := range changes {
		if v == nil {
			delete(svc.Annotations, k)
		} else {
			metav1.SetMetaDataAnnotation(&svc.ObjectMeta, k, *v)
		}
	}
	// The status patch goes on from the version this write produced.
	svc.ResourceVersion = meta.ResourceVersion
	return nil
}

// reconcileUser marks ServiceUserReady (userVerdict): the user exists in the service
// project and has the Secret's current password. It is created marked as ours, or
// adopted, or shared with another KeystoneService of the namespace (shared.go), whose
// password it must then have; a user another namespace's or cluster's KeystoneService
// registered is refused. After a change of serviceUser the previous user is removed
// when it was ours and nobody else names it (handed over when somebody does), before
// the record moves on.
func (r *Reconciler) reconcileUser(ctx context.Context, s *scope) (ctrl.Result, error) {
	step := keystonev1.KeystoneServiceUserReady
	projectID, _, err := s.keystone.EnsureProject(ctx, defaultDomainID, ServiceProject)
	if err != nil {
		return r.failed(s, step, err)
	}
	s.projectID = projectID
	svc := s.service
	replaced := false
	if recordStale(svc) || len(s.otherUsers()) > 0 {
		if replaced, err = r.removePreviousUser(ctx, s); err != nil {
			return r.failed(s, step, err)
		}
		if err := r.recordUser(ctx, svc, svc.Spec.ServiceUser); err != nil {
			return ctrl.Result{}, err
		}
	}
	fresh, err := r.newUser(ctx, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	reg, changed, err := s.keystone.EnsureUser(ctx, identity.UserSpec{
		Name: svc.Spec.ServiceUser, DomainID: defaultDomainID, ProjectID: projectID, Password: s.password,
		PasswordFrom: s.passwordVersion, Owner: r.owner(svc), ClaimUnmarked: s.claimsUser(s.API, svc.Spec.ServiceUser),
		Roles: svc.Spec.ServiceRoles(),
		// A person's touch of the object (its spec, a label, an annotation) has a refused
		// password tried again, once per touch; the operator's own writes (the status that
		// says the conflict, a finalizer, its records) do not.
		Retry:   reconciler.Touched(svc, ownAnnotations...),
		Refused: svc.Annotations[PasswordRefusedAnnotation],
		// Another KeystoneService of this namespace registered it: shared (shared.go).
		Sharing: func(ctx context.Context, mark string) (bool, bool, error) { return r.sharing(ctx, svc, mark) },
		New:     fresh,
		Barred:  s.otherAdmins,
	})
	var foreign *identity.ForeignError
	var admin *identity.AdminUserError
	var otherName *identity.OtherNameError
	var federated *identity.FederatedUserError
	var conflict *identity.PasswordConflictError
	switch {
	case errors.As(err, &foreign), errors.As(err, &admin), errors.As(err, &otherName), errors.As(err, &federated):
		s.Round.Apply(step, userVerdict(svc.Spec, reg, err, nil))
		return ctrl.Result{}, nil
	case errors.As(err, &conflict):
		// Woken when the Secret changes (watched) or the keeper sets another password
		// (the regions' watch reads the user's record): a refused password is not tried
		// again before, as every refusal counts towards Keystone's lockout.
		if err := r.recordRefusal(ctx, svc, conflict.Tried); err != nil {
			return ctrl.Result{}, err
		}
		s.Round.Apply(step, userVerdict(svc.Spec, reg, nil, conflict))
		return ctrl.Result{}, nil
	case err != nil:
		return r.failed(s, step, err)
	}
	s.user = reg
	s.claimed(upstreamUserReady, svc.Spec.ServiceUser, reg.Ownership == identity.Owned)
	s.Mark(ctx, step, changed || replaced, userVerdict(svc.Spec, reg, nil, nil))
	return ctrl.Result{}, nil
}

// newUser tells whether s's user is most likely not in Keystone yet, so that it is
// created without a look-up first (identity.UserSpec.New): this round created the
// KeystoneService's first service (none was there: not a takeover of keystone-operator's
// registration, nor another region's, nor one after a crash that lost the status), and
// no other KeystoneService of the namespace names the user (a shared user is usually
// there). Where it is there after all, the create fails and the user is found as the
// look-up finds it.
func (r *Reconciler) newUser(ctx context.Context, s *scope) (bool, error) {
	if !s.firstService {
		return false, nil
	}
	sharers, err := r.sharers(ctx, s.service, s.service.Spec.ServiceUser)
	return len(sharers) == 0, err
}

// recordStale tells whether UserAnnotation must be written before a request that may
// create the spec's serviceUser: it names another user, or none (it is usually written
// with the finalizer), or an earlier version's records are still there.
func recordStale(svc *keystonev1.KeystoneService) bool {
	_, legacyID := svc.Annotations[legacyUserIDAnnotation]
	_, legacyPassword := svc.Annotations[legacyPasswordFromAnnotation]
	return svc.Annotations[UserAnnotation] != svc.Spec.ServiceUser || legacyID || legacyPassword
}

// removePreviousUser removes the users that UserAnnotation, keystone-operator's proof
// (otherUsers) or an earlier version's record of an ID name, when not the spec's
// serviceUser and this KeystoneService's (removeUser). It tells whether a previous user was named (Keystone was asked
// about it, and it is gone now unless it was adopted or another's).
func (r *Reconciler) removePreviousUser(ctx context.Context, s *scope) (bool, error) {
	svc := s.service
	want := svc.Spec.ServiceUser
	removed := false
	for _, other := range s.otherUsers() {
		if err := r.removeUser(ctx, s, s.keystone, s.API, other, registration.UserRefusal(s.API, "", other) != ""); err != nil {
			return false, err
		}
		removed = true
	}
	if id := svc.Annotations[legacyUserIDAnnotation]; id != "" {
		previous, err := s.keystone.GetUser(ctx, id)
		if err != nil {
			return false, err
		}
		if previous != nil && previous.Name != want && registration.UserRefusal(s.API, "", previous.Name) == "" {
			if err := s.keystone.DeleteOwnedUser(ctx, previous, r.owner(svc), s.claimsUser(s.API, previous.Name)); err != nil {
				return false, err
			}
			removed = true
		}
	}
	return removed, nil
}
