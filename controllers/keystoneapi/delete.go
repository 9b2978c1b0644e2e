package keystoneapi

import (
	"context"
	"fmt"
	"slices"
	"strings"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/internal/finalizers"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	memcachedv1 "github.com/openstack-k8s-operators/infra-operator/apis/memcached/v1beta1"
	topologyv1 "github.com/openstack-k8s-operators/infra-operator/apis/topology/v1beta1"
	mariadbv1 "github.com/openstack-k8s-operators/mariadb-operator/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
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

func dependencyName(api *keystonev1.KeystoneAPI, obj client.Object) string {
	switch obj.(type) {
	case *mariadbv1.MariaDBDatabase:
		return deploy.DatabaseName
	case *mariadbv1.MariaDBAccount:
		return api.Spec.DatabaseAccount
	case *topologyv1.Topology:
		if api.Spec.TopologyRef == nil {
			return ""
		}
		return api.Spec.TopologyRef.Name
	default:
		return api.Spec.MemcachedInstance
	}
}

// releaseStale removes this KeystoneAPI's finalizer from the Memcached, MariaDBAccount,
// MariaDBDatabase and Topology it no longer uses: after memcachedInstance,
// databaseAccount or topologyRef changed, once the pods run with the new ones (or, in
// external mode, all of them).
func (r *Reconciler) releaseStale(ctx context.Context, api *keystonev1.KeystoneAPI) error {
	return r.releaseFinalizers(ctx, api, !api.Spec.ExternalKeystoneAPI)
}

// releaseFinalizers removes this KeystoneAPI's finalizer from every object of the kinds
// it holds (whichever exist), but, when keepInUse, from those the spec names; and
// keystone-operator's from all of them (ours holds those in use).
func (r *Reconciler) releaseFinalizers(ctx context.Context, api *keystonev1.KeystoneAPI, keepInUse bool) error {
	mine := finalizerFor(api)
	for _, list := range []client.ObjectList{
		&memcachedv1.MemcachedList{}, &mariadbv1.MariaDBAccountList{}, &mariadbv1.MariaDBDatabaseList{}, &topologyv1.TopologyList{},
	} {
		if err := r.List(ctx, list, client.InNamespace(api.Namespace)); err != nil {
			return fmt.Errorf("listing %T: %w", list, err)
		}
		items, err := apimeta.ExtractList(list)
		if err != nil {
			return fmt.Errorf("reading %T: %w", list, err)
		}
		for _, item := range items {
			obj, ok := item.(client.Object)
			if !ok {
				continue
			}
			release := []string{UpstreamFinalizer}
			if !keepInUse || obj.GetName() != dependencyName(api, obj) {
				release = append(release, mine)
			}
			if !slices.ContainsFunc(release, func(f string) bool { return controllerutil.ContainsFinalizer(obj, f) }) {
				continue
			}
			if err := finalizers.Remove(ctx, r.Client, obj, release...); err != nil {
				return err
			}
		}
	}
	return nil
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

// registrationKinds are the kinds whose objects hold a KeystoneAPI with a finalizer
// named after their kind (finalizers.For, finalizers.Upstream), and their lists.
var registrationKinds = []struct {
	finalizer, name string
	list            client.ObjectList
}{
	{"keystoneservice", "KeystoneService", &keystonev1.KeystoneServiceList{}},
	{"keystoneendpoint", "KeystoneEndpoint", &keystonev1.KeystoneEndpointList{}},
	{"keystoneapplicationcredential", "KeystoneApplicationCredential", &keystonev1.KeystoneApplicationCredentialList{}},
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
