package keystoneapi

import (
	"context"
	"fmt"
	"strings"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/access"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/internal/finalizers"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// reconcileInput marks InputReady: this is the namespace's first KeystoneAPI, its spec
// can make objects (deploy.SpecProblems), and the admin password Secret and key exist. Any other KeystoneAPI of the namespace is
// refused and the round halted: the database, the KeystoneServices and openstack-config
// are the namespace's, and its objects would be the first's.
func (r *Reconciler) reconcileInput(ctx context.Context, s *scope) (ctrl.Result, error) {
	list := &keystonev1.KeystoneAPIList{}
	if err := r.List(ctx, list, client.InNamespace(s.api.Namespace)); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing KeystoneAPIs: %w", err)
	}
	if v, refused := inputGate(s.api, access.First(list.Items)); refused {
		s.round.Apply(keystonev1.KeystoneAPIInputReady, v)
		s.round.Halt()
		return ctrl.Result{}, nil
	}
	spec := s.api.Spec
	secret, found, err := access.SecretKey(ctx, r.Client, s.api.Namespace, spec.Secret, spec.PasswordSelectors.Admin)
	if err != nil {
		return ctrl.Result{}, err
	}
	if v := passwordVerdict(s.api, found); !v.True {
		s.round.Apply(keystonev1.KeystoneAPIInputReady, v)
		return ctrl.Result{}, nil
	}
	password := string(secret.Data[spec.PasswordSelectors.Admin])
	s.adminPassword, s.adminSource = password, access.PasswordSource(secret, spec.PasswordSelectors.Admin)
	// A copy for removing registrations from Keystone, whatever is deleted first.
	saved, err := r.cleanupData(ctx, s.api, password)
	if err != nil {
		return ctrl.Result{}, err
	}
	cleanup, err := r.writeSecret(ctx, s.api, deploy.CleanupSecretName(s.api), saved, Finalizer)
	if err != nil {
		return ctrl.Result{}, err
	}
	// A no-op but on a Secret whose finalizer was removed.
	if err := finalizers.Add(ctx, r.Client, cleanup, Finalizer); err != nil {
		return ctrl.Result{}, err
	}
	s.round.Apply(keystonev1.KeystoneAPIInputReady, passwordVerdict(s.api, true))
	return ctrl.Result{}, nil
}

// cleanupData is what the cleanup Secret keeps: the admin's password and the CA
// bundle of tls.caBundleSecretName. A bundle that cannot be read now keeps its earlier
// copy (TLSInputReady reports the bundle's absence).
func (r *Reconciler) cleanupData(ctx context.Context, api *keystonev1.KeystoneAPI, password string) (map[string]string, error) {
	data := map[string]string{deploy.CleanupPasswordKey: password}
	if api.Spec.TLS.CaBundleSecretName == "" {
		return data, nil
	}
	if ca, err := access.CABundle(ctx, r.Client, api); err == nil {
		data[deploy.CleanupCABundleKey] = string(ca)
		return data, nil
	}
	previous := &corev1.Secret{}
	err := r.Get(ctx, client.ObjectKey{Namespace: api.Namespace, Name: deploy.CleanupSecretName(api)}, previous)
	if client.IgnoreNotFound(err) != nil {
		return nil, fmt.Errorf("reading secret %s: %w", deploy.CleanupSecretName(api), err)
	}
	if ca, ok := previous.Data[deploy.CleanupCABundleKey]; ok {
		data[deploy.CleanupCABundleKey] = string(ca)
	}
	return data, nil
}

// inputGate is InputReady before the admin password is read, from the namespace's first
// KeystoneAPI: refused (the round halts) for any other one of the namespace (InvalidInput),
// for a spec no object can be made from (InvalidInput), and while openstack-operator has
// not yet written an endpoint's host (Requested).
func inputGate(api, first *keystonev1.KeystoneAPI) (v condition.Verdict, refused bool) {
	if first != nil && first.UID != api.UID {
		return condition.FalseVerdict(condition.InvalidInput, "KeystoneAPI %s already deploys Keystone in namespace %s; "+
			"one KeystoneAPI per namespace: delete this one", first.Name, api.Namespace), true
	}
	if problems := deploy.SpecProblems(api); len(problems) > 0 {
		return condition.FalseVerdict(condition.InvalidInput, "%s", strings.Join(problems, "; ")), true
	}
	if pending := deploy.PendingEndpoints(api); len(pending) > 0 {
		return condition.FalseVerdict(condition.Requested, "waiting for a host in %s (openstack-operator sets it once its "+
			"Route has one)", strings.Join(pending, " and ")), true
	}
	return condition.Verdict{}, false
}

// passwordVerdict is InputReady once the gate passed: True when the admin password's
// Secret holds its key, else DependencyNotFound.
func passwordVerdict(api *keystonev1.KeystoneAPI, found bool) condition.Verdict {
	if !found {
		return condition.FalseVerdict(condition.DependencyNotFound, "secret %s with key %s not found", api.Spec.Secret,
			api.Spec.PasswordSelectors.Admin)
	}
	return condition.TrueVerdict("admin password found in secret %s", api.Spec.Secret)
}
