package keystoneapi

import (
	"context"
	"fmt"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/finalizers"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	topologyv1 "github.com/openstack-k8s-operators/infra-operator/apis/topology/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// reconcileTopology marks TopologyReady: the Topology of topologyRef exists in the
// KeystoneAPI's namespace and carries this KeystoneAPI's finalizer while its pods use
// it; status.lastAppliedTopology names it. A Topology no longer referenced is released
// once the pods run without it (releaseStale).
func (r *Reconciler) reconcileTopology(ctx context.Context, s *scope) (ctrl.Result, error) {
	api := s.api
	step := keystonev1.KeystoneAPITopologyReady
	ref := api.Spec.TopologyRef
	topology := &topologyv1.Topology{}
	switch err := r.Get(ctx, client.ObjectKey{Namespace: api.Namespace, Name: ref.Name}, topology); {
	case apierrors.IsNotFound(err):
		topology = nil
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("reading topology %s: %w", ref.Name, err)
	}
	if v := topologyVerdict(api, topology); !v.True {
		s.round.Apply(step, v)
		return ctrl.Result{}, nil
	}
	if s.acting(step) {
		if err := finalizers.Add(ctx, r.Client, topology, finalizerFor(api)); err != nil {
			return ctrl.Result{}, err
		}
		api.Status.LastAppliedTopology = &keystonev1.TopoRef{Name: ref.Name, Namespace: api.Namespace}
	}
	s.in.Topology = topology
	s.round.Apply(step, topologyVerdict(api, topology))
	return ctrl.Result{}, nil
}

// topologyVerdict is TopologyReady from the Topology of topologyRef (nil when it does not
// exist): InvalidInput for one in another namespace, DependencyNotFound while it is
// missing, True with what it holds.
func topologyVerdict(api *keystonev1.KeystoneAPI, topology *topologyv1.Topology) condition.Verdict {
	ref := api.Spec.TopologyRef
	switch {
	case ref.Namespace != "" && ref.Namespace != api.Namespace:
		return condition.FalseVerdict(condition.InvalidInput, "topologyRef.namespace %s: the Topology must be in the "+
			"KeystoneAPI's namespace %s", ref.Namespace, api.Namespace)
	case topology == nil:
		return condition.FalseVerdict(condition.DependencyNotFound, "topology %s not found", ref.Name)
	}
	n := 0
	if c := topology.Spec.TopologySpreadConstraints; c != nil {
		n = len(*c)
	}
	return condition.TrueVerdict("topology %s: %d spread constraints, affinity %t", ref.Name, n, topology.Spec.Affinity != nil)
}
