package keystoneapi

import (
	"context"
	"fmt"
	"slices"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/internal/finalizers"
	memcachedv1 "github.com/openstack-k8s-operators/infra-operator/apis/memcached/v1beta1"
	topologyv1 "github.com/openstack-k8s-operators/infra-operator/apis/topology/v1beta1"
	mariadbv1 "github.com/openstack-k8s-operators/mariadb-operator/api/v1beta1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// releaseUnused is the phase after the steps that lets go of what the KeystoneAPI no
// longer uses: once its pods run with the current Memcached, account, database and
// Topology (DeploymentReady True, with every step it needs), or, in external mode,
// once the external Keystone answered (KeystoneEndpointReady True), releaseStale.
func (r *Reconciler) releaseUnused(ctx context.Context, s *scope) (ctrl.Result, error) {
	done := keystonev1.KeystoneAPIDeploymentReady
	if s.api.Spec.ExternalKeystoneAPI {
		done = keystonev1.KeystoneAPIEndpointReady
	}
	if s.round.WaitingFor(done) != "" || !s.round.IsTrue(done) {
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, r.releaseStale(ctx, s.api)
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

// dependencyName is the name of the object of obj's kind the spec uses.
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
