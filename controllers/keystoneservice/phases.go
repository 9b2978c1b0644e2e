package keystoneservice

import (
	"context"
	"fmt"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/finalizers"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	"github.com/keystone-stepwise/keystone-operator/pkg/identity"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

const (
	// ServiceProject holds the service users, in DefaultDomain.
	ServiceProject = "service"
	// DefaultDomain is Keystone's default domain.
	DefaultDomain   = "default"
	defaultDomainID = "default"
	passwordHash    = "password"
)

// phases lists the steps of a KeystoneService in declared order.
func (r *Reconciler) phases() []condition.Phase[*scope] {
	return []condition.Phase[*scope]{
		{Step: keystonev1.KeystoneServiceKeystoneAPIReady, Run: r.reconcileKeystoneAPI},
		{Step: keystonev1.KeystoneServiceInputReady, Run: r.reconcileInput},
		{Step: keystonev1.KeystoneServiceServiceReady, Run: r.reconcileService},
		{Step: keystonev1.KeystoneServiceEndpointsReady, Run: r.reconcileEndpoints},
		{Step: keystonev1.KeystoneServiceUserReady, Run: r.reconcileUser},
		{Step: keystonev1.KeystoneServiceRolesReady, Run: r.reconcileRoles},
		{Step: keystonev1.KeystoneServiceRoleAssignmentReady, Run: r.reconcileAssignment},
	}
}

// keystoneAPI returns the namespace's only KeystoneAPI; when there is none, or more
// than one, it returns the reason and message to report instead.
func (r *Reconciler) keystoneAPI(ctx context.Context, ns string) (*keystonev1.KeystoneAPI, *condition.Reason, string, error) {
	list := &keystonev1.KeystoneAPIList{}
	if err := r.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, nil, "", fmt.Errorf("listing KeystoneAPIs: %w", err)
	}
	switch len(list.Items) {
	case 0:
		return nil, &condition.DependencyNotFound, "no KeystoneAPI in namespace " + ns, nil
	case 1:
		return &list.Items[0], nil, "", nil
	default:
		return nil, &condition.InvalidInput, fmt.Sprintf("%d KeystoneAPIs in namespace %s; a KeystoneService needs exactly one",
			len(list.Items), ns), nil
	}
}

func apiFinalizer(svc *keystonev1.KeystoneService) string {
	return "keystone.openstack.org/keystoneservice-" + svc.Name
}

// reconcileKeystoneAPI marks KeystoneAPIReady: it mirrors the namespace's KeystoneAPI
// and puts a finalizer on it, so that Keystone outlives the registration.
func (r *Reconciler) reconcileKeystoneAPI(ctx context.Context, s *scope) (ctrl.Result, error) {
	step := keystonev1.KeystoneServiceKeystoneAPIReady
	api, reason, why, err := r.keystoneAPI(ctx, s.service.Namespace)
	switch {
	case err != nil:
		return ctrl.Result{}, err
	case api == nil:
		s.round.MarkFalse(step, *reason, "%s", why)
		return ctrl.Result{}, nil
	case !api.DeletionTimestamp.IsZero():
		r.release(ctx, s, api)
		s.round.MarkFalse(step, condition.DependencyNotFound, "KeystoneAPI %s is being deleted", api.Name)
		return ctrl.Result{}, nil
	}
	s.api = api
	if s.round.Mirror(step, "KeystoneAPI", api.Name, api.Status.Conditions); !s.round.IsTrue(step) {
		return ctrl.Result{}, nil
	}
	if !api.IsReady() || api.Status.APIEndpoints[keystonev1.EndpointInternal] == "" {
		s.round.MarkFalse(step, condition.Requested, "KeystoneAPI %s: waiting for its current generation to be ready", api.Name)
		return ctrl.Result{}, nil
	}
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
	if secret == nil || secret.Data[spec.PasswordSelector] == nil {
		s.round.MarkFalse(step, condition.DependencyNotFound, "secret %s with key %s not found", spec.Secret, spec.PasswordSelector)
		return ctrl.Result{}, nil
	}
	s.password = string(secret.Data[spec.PasswordSelector])
	s.passwordVersion = string(secret.UID) + "/" + secret.ResourceVersion
	api := s.api
	adminSecret, err := r.secret(ctx, api.Namespace, api.Spec.Secret)
	if err != nil {
		return ctrl.Result{}, err
	}
	if adminSecret == nil || adminSecret.Data[api.Spec.PasswordSelectors.Admin] == nil {
		s.round.MarkFalse(step, condition.DependencyNotFound, "admin secret %s with key %s of KeystoneAPI %s not found",
			api.Spec.Secret, api.Spec.PasswordSelectors.Admin, api.Name)
		return ctrl.Result{}, nil
	}
	s.admin = identity.Credentials{
		URL: api.Status.APIEndpoints[keystonev1.EndpointInternal], User: api.Spec.AdminUser,
		Password: string(adminSecret.Data[api.Spec.PasswordSelectors.Admin]), Project: api.Spec.AdminProject, Domain: "Default",
	}
	s.round.MarkTrue(step, "password of user %s found in secret %s", spec.ServiceUser, spec.Secret)
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
// description and enabled flag; status.serviceID.
func (r *Reconciler) reconcileService(ctx context.Context, s *scope) (ctrl.Result, error) {
	step := keystonev1.KeystoneServiceServiceReady
	kc, err := r.Keystone.Get(ctx, s.admin)
	if err != nil {
		return r.failed(s, step, err)
	}
	s.keystone = kc
	spec := s.service.Spec
	id, changed, err := kc.EnsureService(ctx, s.service.Status.ServiceID, identity.ServiceSpec{
		Type: spec.ServiceType, Name: spec.ServiceName, Description: spec.ServiceDescription, Enabled: ptr.Deref(spec.Enabled, true),
	})
	if err != nil {
		return r.failed(s, step, err)
	}
	s.service.Status.ServiceID = id
	r.mark(s, step, changed, "service %s (%s) registered as %s", spec.ServiceName, spec.ServiceType, id)
	return ctrl.Result{}, nil
}

// reconcileEndpoints marks KeystoneEndpointsReady: exactly the spec's endpoints, in the
// KeystoneAPI's region; status.endpointIDs.
func (r *Reconciler) reconcileEndpoints(ctx context.Context, s *scope) (ctrl.Result, error) {
	step := keystonev1.KeystoneServiceEndpointsReady
	ids, changed, err := s.keystone.EnsureEndpoints(ctx, s.service.Status.ServiceID, s.api.Spec.Region, s.service.Spec.Endpoints)
	if err != nil {
		return r.failed(s, step, err)
	}
	if len(ids) == 0 {
		ids = nil
	}
	s.service.Status.EndpointIDs = ids
	r.mark(s, step, changed, "%d endpoints in region %s", len(ids), s.api.Spec.Region)
	return ctrl.Result{}, nil
}

// reconcileUser marks ServiceUserReady: the user exists in the service project and
// has the Secret's current password.
func (r *Reconciler) reconcileUser(ctx context.Context, s *scope) (ctrl.Result, error) {
	step := keystonev1.KeystoneServiceUserReady
	projectID, _, err := s.keystone.EnsureProject(ctx, defaultDomainID, ServiceProject)
	if err != nil {
		return r.failed(s, step, err)
	}
	s.projectID = projectID
	status := &s.service.Status
	id, changed, err := s.keystone.EnsureUser(ctx, identity.UserSpec{
		Name: s.service.Spec.ServiceUser, DomainID: defaultDomainID, ProjectID: projectID, Password: s.password,
		SetPassword: status.Hash[passwordHash] != s.passwordVersion,
	})
	if err != nil {
		return r.failed(s, step, err)
	}
	s.userID = id
	if status.Hash == nil {
		status.Hash = map[string]string{}
	}
	status.Hash[passwordHash] = s.passwordVersion
	r.mark(s, step, changed, "user %s (%s) has the password of secret %s", s.service.Spec.ServiceUser, id, s.service.Spec.Secret)
	return ctrl.Result{}, nil
}

// reconcileRoles marks RolesReady: every role of the spec exists.
func (r *Reconciler) reconcileRoles(ctx context.Context, s *scope) (ctrl.Result, error) {
	step := keystonev1.KeystoneServiceRolesReady
	ids, changed, err := s.keystone.EnsureRoles(ctx, s.service.Spec.Roles)
	if err != nil {
		return r.failed(s, step, err)
	}
	s.roleIDs = ids
	r.mark(s, step, changed, "roles %v exist", s.service.Spec.Roles)
	return ctrl.Result{}, nil
}

// reconcileAssignment marks RoleAssignmentReady: the user has every role on the service project.
func (r *Reconciler) reconcileAssignment(ctx context.Context, s *scope) (ctrl.Result, error) {
	step := keystonev1.KeystoneServiceRoleAssignmentReady
	ids := make([]string, 0, len(s.roleIDs))
	for _, name := range s.service.Spec.Roles {
		ids = append(ids, s.roleIDs[name])
	}
	changed, err := s.keystone.EnsureAssignments(ctx, s.userID, s.projectID, ids)
	if err != nil {
		return r.failed(s, step, err)
	}
	r.mark(s, step, changed, "user %s has roles %v on project %s", s.service.Spec.ServiceUser, s.service.Spec.Roles, ServiceProject)
	return ctrl.Result{}, nil
}

// mark marks a registration step: done this round and confirmed by the next one when
// it wrote to Keystone, True when Keystone already matched.
func (r *Reconciler) mark(s *scope, step lc.Type, changed bool, format string, args ...any) {
	if changed {
		s.round.MarkDone(step, stepReasons[step].created, format, args...)
		return
	}
	s.round.MarkTrue(step, format, args...)
}

// failed reports a Keystone error on step: a transient one (no answer, 5xx) is a
// Warning retried with backoff; any other is the step's Failed reason (Error), not
// retried until the spec or an input changes.
func (r *Reconciler) failed(s *scope, step lc.Type, err error) (ctrl.Result, error) {
	if identity.SessionSuspect(err) {
		r.Keystone.Forget(s.admin)
		s.round.MarkFalse(step, condition.ServiceUnavailable, "Keystone at %s: %s to a request that cannot get one; authenticating again",
			s.admin.URL, identity.Message(err))
		return ctrl.Result{}, err
	}
	if identity.Transient(err) {
		s.round.MarkFalse(step, condition.ServiceUnavailable, "Keystone at %s: %s", s.admin.URL, identity.Message(err))
		return ctrl.Result{}, err
	}
	s.round.MarkFalse(step, stepReasons[step].failed, "Keystone at %s refused: %s", s.admin.URL, identity.Message(err))
	return ctrl.Result{}, reconcile.TerminalError(err)
}
