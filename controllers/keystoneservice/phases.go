package keystoneservice

import (
	"context"
	"errors"
	"fmt"
	"github.com/keystone-stepwise/keystone-operator/internal/access"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/controllers/registration"
	"github.com/keystone-stepwise/keystone-operator/internal/finalizers"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/internal/reconciler"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

const (
	// ServiceProject holds the service users, in DefaultDomain.
	ServiceProject = "service"
	// DefaultDomain is Keystone's default domain.
	DefaultDomain   = "default"
	defaultDomainID = "default"
	// UserAnnotation records on a KeystoneService the name of the user it registers in
	// Keystone: written with its finalizer, before its first request to Keystone, and
	// moved to a new serviceUser only once the previous user is removed (when it was
	// this KeystoneService's), so that no user it created is ever forgotten.
	// Annotations, not status: metadata is kept on every schema (keystone-operator's
	// KeystoneService status has no room for it). Where the user's password came from
	// is recorded on the user itself (identity.PasswordFromAttribute).
	UserAnnotation = "keystone.openstack.org/service-user"
	// legacyUserIDAnnotation and legacyPasswordFromAnnotation are the records of
	// earlier versions (the user's ID, and the Secret version its password was set
	// from): read once, to find the user they name, and then removed.
	legacyUserIDAnnotation       = "keystone.openstack.org/user-id"
	legacyPasswordFromAnnotation = "keystone.openstack.org/password-set-from"
)

// owner is how this KeystoneService marks what it creates in Keystone: itself, and
// the cluster it lives in (identity.OwnerMark).
func (r *Reconciler) owner(svc *keystonev1.KeystoneService) string {
	return identity.OwnerMark("KeystoneService", svc, r.ClusterID)
}

// takenOver tells whether keystone-operator registered this KeystoneService before
// this suite (its own finalizer is on it): the service it recorded and the user of
// serviceUser, which it would delete with the KeystoneService, are claimed as ours
// although they carry no mark.
func takenOver(svc *keystonev1.KeystoneService) bool {
	return controllerutil.ContainsFinalizer(svc, finalizers.UpstreamOwn("keystoneservice"))
}

// claimsUnmarked tells whether an unmarked user named name is this KeystoneService's
// (takenOver), which it never is for the admin user of api, whatever keystone-operator did.
func claimsUnmarked(svc *keystonev1.KeystoneService, api *keystonev1.KeystoneAPI, name string) bool {
	return takenOver(svc) && name != api.Spec.AdminUser
}

// recordUser writes UserAnnotation for the user name and drops the records of earlier
// versions, patching the annotations alone.
func (r *Reconciler) recordUser(ctx context.Context, svc *keystonev1.KeystoneService, name string) error {
	meta := &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Name: svc.Name, Namespace: svc.Namespace}}
	patch := client.RawPatch(types.MergePatchType, []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:%q,%q:null,%q:null}}}`,
		UserAnnotation, name, legacyUserIDAnnotation, legacyPasswordFromAnnotation)))
	if err := r.Patch(ctx, meta, patch); err != nil {
		return fmt.Errorf("recording user %s on %s: %w", name, svc.Name, err)
	}
	metav1.SetMetaDataAnnotation(&svc.ObjectMeta, UserAnnotation, name)
	delete(svc.Annotations, legacyUserIDAnnotation)
	delete(svc.Annotations, legacyPasswordFromAnnotation)
	// The status patch goes on from the version this write produced.
	svc.ResourceVersion = meta.ResourceVersion
	return nil
}

// phases lists the steps of a KeystoneService in declared order.
func (r *Reconciler) phases() []reconciler.Phase[*scope] {
	return []reconciler.Phase[*scope]{
		{Step: keystonev1.KeystoneServiceKeystoneAPIReady, Run: r.reconcileKeystoneAPI},
		{Step: keystonev1.KeystoneServiceInputReady, Run: r.reconcileInput},
		{Step: keystonev1.KeystoneServiceServiceReady, Run: r.reconcileService},
		{Step: keystonev1.KeystoneServiceUserReady, Run: r.reconcileUser},
		{Step: keystonev1.KeystoneServiceRolesReady, Run: r.reconcileRoles},
		{Step: keystonev1.KeystoneServiceRoleAssignmentReady, Run: r.reconcileAssignment},
	}
}

func apiFinalizer(svc *keystonev1.KeystoneService) string {
	return finalizers.For("keystoneservice", svc.Name)
}

// reconcileKeystoneAPI marks KeystoneAPIReady: it mirrors the namespace's KeystoneAPI
// and puts a finalizer on it, so that Keystone outlives the registration. A KeystoneAPI
// being deleted waits for nobody: the registration is removed where its Keystone
// stays (external mode), and the finalizer released.
func (r *Reconciler) reconcileKeystoneAPI(ctx context.Context, s *scope) (ctrl.Result, error) {
	api, usable, err := registration.MirrorKeystoneAPI(ctx, r.Client, s.Round, keystonev1.KeystoneServiceKeystoneAPIReady, s.service.Namespace)
	switch {
	case err != nil:
		return ctrl.Result{}, err
	case api != nil && !api.DeletionTimestamp.IsZero():
		if registration.KeystoneStays(api) && registered(s, api) {
			if waitForEndpoints(s, keystonev1.KeystoneServiceKeystoneAPIReady, "KeystoneAPI "+api.Name+" is being deleted") {
				return ctrl.Result{}, nil
			}
			if done, err := r.deregister(ctx, s, api); err != nil || !done {
				return ctrl.Result{}, err
			}
		}
		return ctrl.Result{}, r.release(ctx, s, api)
	case !usable:
		return ctrl.Result{}, nil
	}
	s.API = api
	return ctrl.Result{}, finalizers.Add(ctx, r.Client, api, apiFinalizer(s.service))
}

// reconcileInput marks InputReady: the service user's password and the admin's.
func (r *Reconciler) reconcileInput(ctx context.Context, s *scope) (ctrl.Result, error) {
	step := keystonev1.KeystoneServiceInputReady
	spec := s.service.Spec
	secret, err := r.secret(ctx, s.service.Namespace, spec.Secret)
	if err != nil {
		return ctrl.Result{}, err
	}
	if secret == nil || len(secret.Data[spec.PasswordSelector]) == 0 {
		s.Round.MarkFalse(step, condition.DependencyNotFound, "secret %s with key %s not found", spec.Secret, spec.PasswordSelector)
		return ctrl.Result{}, nil
	}
	s.password = string(secret.Data[spec.PasswordSelector])
	s.passwordVersion = string(secret.UID) + "/" + secret.ResourceVersion
	admin, ok, err := access.Credentials(ctx, r.Client, s.API)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !ok {
		s.Round.MarkFalse(step, condition.DependencyNotFound, "%s", access.Missing(s.API))
		return ctrl.Result{}, nil
	}
	s.Admin = admin
	if spec.ServiceUser == s.API.Spec.AdminUser {
		s.Round.MarkFalse(step, condition.InvalidInput, "serviceUser %s is the admin user of KeystoneAPI %s; a service needs a user of its own",
			spec.ServiceUser, s.API.Name)
		return ctrl.Result{}, nil
	}
	s.Round.MarkTrue(step, "password of user %s found in secret %s", spec.ServiceUser, spec.Secret)
	return ctrl.Result{}, nil
}

func (r *Reconciler) secret(ctx context.Context, ns, name string) (*corev1.Secret, error) {
	secret := &corev1.Secret{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading secret %s: %w", name, err)
	}
	return secret, nil
}

// reconcileService marks KeystoneServiceReady: the service exists with the spec's
// description and enabled flag; status.serviceID. The service is created marked as
// this KeystoneService's, or adopted when it exists; after a change of serviceType or
// serviceName the previous one is removed when it was ours.
func (r *Reconciler) reconcileService(ctx context.Context, s *scope) (ctrl.Result, error) {
	step := keystonev1.KeystoneServiceServiceReady
	kc, err := r.Keystone.Get(ctx, s.Admin)
	if err != nil {
		return r.failed(s, step, err)
	}
	s.keystone = kc
	svc := s.service
	spec := svc.Spec
	reg, changed, err := kc.EnsureService(ctx, svc.Status.ServiceID, identity.ServiceSpec{
		Type: spec.ServiceType, Name: spec.ServiceName, Description: spec.ServiceDescription, Enabled: ptr.Deref(spec.Enabled, true),
		Owner: r.owner(svc), ClaimUnmarked: takenOver(svc),
	})
	var foreign *identity.ForeignError
	if errors.As(err, &foreign) {
		s.Round.MarkFalse(step, condition.InvalidInput, "%v; choose another serviceType or serviceName", foreign)
		return ctrl.Result{}, nil
	}
	if err != nil {
		return r.failed(s, step, err)
	}
	if previous := svc.Status.ServiceID; previous != "" && previous != reg.ID {
		if err := kc.DeleteService(ctx, previous, r.owner(svc), takenOver(svc)); err != nil {
			return r.failed(s, step, err)
		}
		changed = true
	}
	svc.Status.ServiceID = reg.ID
	s.Mark(ctx, step, changed, "service %s (%s) registered as %s%s", spec.ServiceName, spec.ServiceType, reg.ID, adoptedNote(reg))
	return ctrl.Result{}, nil
}

// adoptedNote says, in a step's message, that an entity is used but not this
// KeystoneService's to remove.
func adoptedNote(reg identity.Registered) string {
	if reg.Ownership == identity.Adopted {
		return " (adopted: it existed before, and stays when this KeystoneService goes)"
	}
	return ""
}

// reconcileUser marks ServiceUserReady: the user exists in the service project and
// has the Secret's current password. It is created marked as ours, or adopted; a
// user another KeystoneService registered is refused. After a change of serviceUser
// the previous user is removed when it was ours, before the record moves on.
func (r *Reconciler) reconcileUser(ctx context.Context, s *scope) (ctrl.Result, error) {
	step := keystonev1.KeystoneServiceUserReady
	projectID, _, err := s.keystone.EnsureProject(ctx, defaultDomainID, ServiceProject)
	if err != nil {
		return r.failed(s, step, err)
	}
	s.projectID = projectID
	svc := s.service
	replaced := false
	if recordStale(svc) {
		if replaced, err = r.removePreviousUser(ctx, s); err != nil {
			return r.failed(s, step, err)
		}
		if err := r.recordUser(ctx, svc, svc.Spec.ServiceUser); err != nil {
			return ctrl.Result{}, err
		}
	}
	reg, changed, err := s.keystone.EnsureUser(ctx, identity.UserSpec{
		Name: svc.Spec.ServiceUser, DomainID: defaultDomainID, ProjectID: projectID, Password: s.password,
		PasswordFrom: s.passwordVersion, Owner: r.owner(svc), ClaimUnmarked: takenOver(svc),
	})
	var foreign *identity.ForeignError
	if errors.As(err, &foreign) {
		s.Round.MarkFalse(step, condition.InvalidInput, "%v; choose another serviceUser", foreign)
		return ctrl.Result{}, nil
	}
	if err != nil {
		return r.failed(s, step, err)
	}
	s.user = reg
	s.Mark(ctx, step, changed || replaced, "user %s (%s) has the password of secret %s%s", svc.Spec.ServiceUser, reg.ID, svc.Spec.Secret, adoptedNote(reg))
	return ctrl.Result{}, nil
}

// recordStale tells whether UserAnnotation must be written before a request that may
// create the spec's serviceUser: it names another user, or none (it is usually written
// with the finalizer), or an earlier version's records are still there.
func recordStale(svc *keystonev1.KeystoneService) bool {
	_, legacyID := svc.Annotations[legacyUserIDAnnotation]
	_, legacyPassword := svc.Annotations[legacyPasswordFromAnnotation]
	return svc.Annotations[UserAnnotation] != svc.Spec.ServiceUser || legacyID || legacyPassword
}

// removePreviousUser removes the user that UserAnnotation (or an earlier version's
// record of its ID) names, when it is not the spec's serviceUser and was this
// KeystoneService's. It tells whether a previous user was named (Keystone was asked
// about it, and it is gone now unless it was adopted or another's).
func (r *Reconciler) removePreviousUser(ctx context.Context, s *scope) (bool, error) {
	svc := s.service
	want, recorded := svc.Spec.ServiceUser, svc.Annotations[UserAnnotation]
	removed := false
	if recorded != "" && recorded != want {
		if err := s.keystone.DeleteUserNamed(ctx, defaultDomainID, recorded, r.owner(svc), claimsUnmarked(svc, s.API, recorded)); err != nil {
			return false, err
		}
		removed = true
	}
	if id := svc.Annotations[legacyUserIDAnnotation]; id != "" {
		previous, err := s.keystone.GetUser(ctx, id)
		if err != nil {
			return false, err
		}
		if previous != nil && previous.Name != want {
			if err := s.keystone.DeleteOwnedUser(ctx, previous, r.owner(svc), claimsUnmarked(svc, s.API, previous.Name)); err != nil {
				return false, err
			}
			removed = true
		}
	}
	return removed, nil
}

// reconcileRoles marks RolesReady: every role of the spec exists.
func (r *Reconciler) reconcileRoles(ctx context.Context, s *scope) (ctrl.Result, error) {
	step := keystonev1.KeystoneServiceRolesReady
	ids, changed, err := s.keystone.EnsureRoles(ctx, s.service.Spec.ServiceRoles())
	if err != nil {
		return r.failed(s, step, err)
	}
	s.roleIDs = ids
	s.Mark(ctx, step, changed, "roles %v exist", s.service.Spec.ServiceRoles())
	return ctrl.Result{}, nil
}

// reconcileAssignment marks RoleAssignmentReady: the user has every role on the
// service project, and no other when the user is ours. A role or project deleted since
// this client looked it up is looked up again, once.
func (r *Reconciler) reconcileAssignment(ctx context.Context, s *scope) (ctrl.Result, error) {
	step := keystonev1.KeystoneServiceRoleAssignmentReady
	roles := s.service.Spec.ServiceRoles()
	// A user of ours has exactly the spec's roles: one removed from the spec is revoked.
	exclusive := s.user.Ownership == identity.Owned
	changed, err := r.assign(ctx, s, exclusive)
	if identity.Stale(err) {
		if s.projectID, _, err = s.keystone.EnsureProject(ctx, defaultDomainID, ServiceProject); err == nil {
			if s.roleIDs, _, err = s.keystone.EnsureRoles(ctx, roles); err == nil {
				changed, err = r.assign(ctx, s, exclusive)
			}
		}
	}
	if err != nil {
		return r.failed(s, step, err)
	}
	only := ""
	if exclusive {
		only = " (and no other)"
	}
	s.Mark(ctx, step, changed, "user %s has roles %v%s on project %s", s.service.Spec.ServiceUser, roles, only, ServiceProject)
	return ctrl.Result{}, nil
}

func (r *Reconciler) assign(ctx context.Context, s *scope, exclusive bool) (bool, error) {
	roles := s.service.Spec.ServiceRoles()
	ids := make([]string, 0, len(roles))
	for _, name := range roles {
		ids = append(ids, s.roleIDs[name])
	}
	return s.keystone.EnsureAssignments(ctx, identity.AssignmentSpec{UserID: s.user.ID, ProjectID: s.projectID, RoleIDs: ids,
		Exclusive: exclusive, NewUser: s.user.Created})
}

// failed reports a Keystone error on step with the step's failed reason (Session.Failed).
func (r *Reconciler) failed(s *scope, step lc.Type, err error) (ctrl.Result, error) {
	return s.Failed(step, failedReasons[step], err)
}
