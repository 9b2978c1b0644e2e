package deploy

import (
	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/openstack-k8s-operators/lib-common/modules/common/pdb"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// PDBMinReplicas is the number of API replicas from which the API pods have a
// PodDisruptionBudget: with one replica, a budget would either let a drain take it (no
// protection) or block every drain of its node (a stuck node), so there is none, and a
// drain costs Keystone its only pod until the replacement is Ready.
const PDBMinReplicas = 2

// PDBName is the name of the API pods' PodDisruptionBudget: the KeystoneAPI's, as its
// Deployment's.
func PDBName(api *keystonev1.KeystoneAPI) string { return api.Name }

// PodDisruptionBudget is the API pods' PodDisruptionBudget (lib-common's
// MaxUnavailablePodDisruptionBudget): a drain or any eviction takes one of them at a
// time, the next once the replacement is Ready; a pod that is not Ready may always be
// evicted (UnhealthyPodEvictionPolicy AlwaysAllow), so that a broken pod never blocks a
// node's drain. nil below PDBMinReplicas.
func PodDisruptionBudget(api *keystonev1.KeystoneAPI) *policyv1.PodDisruptionBudget {
	if *Replicas(api) < PDBMinReplicas {
		return nil
	}
	budget := pdb.MaxUnavailablePodDisruptionBudget(PDBName(api), api.Namespace, intstr.FromInt32(1), SelectorLabels(api))
	budget.Labels = Labels(api)
	budget.Spec.UnhealthyPodEvictionPolicy = ptr.To(policyv1.AlwaysAllow)
	return budget
}
