package keystoneapi

import (
	"context"
	"strings"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/internal/finalizers"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Finalizer keeps a KeystoneAPI until the finalizers it put on other objects are released.
const Finalizer = "keystone.openstack.org/keystoneapi"

// reconcileDelete waits until no registration holds the KeystoneAPI, then releases the
// cleanup Secret (the admin's password they remove themselves with), our finalizers on
// the databases, accounts, Memcacheds and Topologies of the namespace (whichever still
// exist), and the KeystoneAPI's own. Owned children go with it.
func (r *Reconciler) reconcileDelete(ctx context.Context, s *scope) (ctrl.Result, error) {
	api := s.api
	r.verified.Delete(api.UID)
	if err := r.releaseOrphaned(ctx, api); err != nil {
		return ctrl.Result{}, err
	}
	if holders := registrationHolders(api); len(holders) > 0 {
		s.round.Apply(keystonev1.KeystoneAPIInputReady, deletionHeldVerdict(holders))
		return ctrl.Result{}, nil
	}
	cleanup := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: api.Namespace, Name: deploy.CleanupSecretName(api)}}
	if err := finalizers.Remove(ctx, r.Client, cleanup, Finalizer); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.releaseFinalizers(ctx, api, false); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, finalizers.Remove(ctx, r.Client, api, Finalizer, UpstreamFinalizer)
}

// releaseOrphaned removes from api the finalizers of registrations that do not exist
// (removed by hand, or by another operator, without releasing api), with a Warning
// Event naming each: no deletion waits on an object that is gone.
func (r *Reconciler) releaseOrphaned(ctx context.Context, api *keystonev1.KeystoneAPI) error {
	for _, kind := range registrationKinds {
		released, err := finalizers.ReleaseOrphaned(ctx, r.Client, r.Reporter.Reader, api, kind.finalizer, kind.list)
		if err != nil {
			return err
		}
		for _, f := range released {
			r.Reporter.Recorder.Eventf(api, corev1.EventTypeWarning, "FinalizerReleased",
				"released finalizer %s: the object that put it there no longer exists", f)
		}
	}
	return nil
}

// registrationHolders names the registrations whose finalizers hold the KeystoneAPI:
// this suite's ("KeystoneService glance") and keystone-operator's.
func registrationHolders(api *keystonev1.KeystoneAPI) []string {
	var names []string
	for _, kind := range registrationKinds {
		for _, holder := range finalizers.Holders(api, kind.finalizer) {
			names = append(names, kind.name+" "+holder)
		}
		for _, f := range api.GetFinalizers() {
			if holder, ok := strings.CutPrefix(f, finalizers.Upstream(kind.finalizer, "")); ok {
				names = append(names, kind.name+" "+holder)
			}
		}
	}
	return names
}

// deletionHeldVerdict is InputReady while a KeystoneAPI being deleted is held by the
// registrations of its namespace (holders, by kind and name): Requested (Info), each
// removes its registration from Keystone first.
func deletionHeldVerdict(holders []string) condition.Verdict {
	return condition.FalseVerdict(condition.Requested, "deleting: waiting for %s to remove their registrations", strings.Join(holders, ", "))
}
