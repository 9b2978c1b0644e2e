package keystoneapi

import (
	"context"
	"fmt"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/internal/permissions"
	"github.com/keystone-stepwise/keystone-operator/internal/reconciler"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;update;patch;delete

// reconcilePDB marks PDBReady (pdbVerdict): from deploy.PDBMinReplicas replicas on, the
// API pods' PodDisruptionBudget lets a drain or an eviction take one of them at a time;
// below, there is none (one left from more replicas is deleted). Where the operator may
// not write PodDisruptionBudgets (openstack-operator's role for keystone-operator grants
// none), the step says so and is True: the pods go without one, as keystone-operator's do.
func (r *Reconciler) reconcilePDB(ctx context.Context, s *scope) (ctrl.Result, error) {
	api := s.api
	step := keystonev1.KeystoneAPIPDBReady
	if !mayWritePDBs(r.Client) {
		s.round.Apply(step, pdbVerdict(api, nil, false, ""))
		return ctrl.Result{}, nil
	}
	current := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: api.Namespace, Name: deploy.PDBName(api)}}
	found, err := r.written(ctx, s, current)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !s.acting(step) {
		if !found {
			current = nil
		}
		s.round.Apply(step, pdbVerdict(api, current, true, s.afterwards(step)))
		return ctrl.Result{}, nil
	}
	desired := deploy.PodDisruptionBudget(api)
	switch {
	case desired == nil && found && metav1.IsControlledBy(current, api):
		if err := r.Delete(ctx, current); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("deleting poddisruptionbudget %s: %w", current.Name, err)
		}
		current = nil
	case desired == nil:
		current = nil
	default:
		if _, err := reconciler.CreateOrPatch(ctx, r.Client, current, func() error {
			current.Labels = deploy.MergeLabels(current.Labels, desired.Labels)
			current.Spec = desired.Spec
			return controllerutil.SetControllerReference(api, current, r.Scheme())
		}); err != nil {
			return ctrl.Result{}, fmt.Errorf("ensuring poddisruptionbudget %s: %w", current.Name, err)
		}
	}
	s.round.Apply(step, pdbVerdict(api, current, true, ""))
	return ctrl.Result{}, nil
}

// mayWritePDBs tells whether the operator may read (from its cache), write and delete
// PodDisruptionBudgets, as the API server said at start.
func mayWritePDBs(c client.Client) bool {
	for _, verb := range []string{"get", "list", "watch", "create", "patch", "delete"} {
		if !permissions.Allows(c, verb, "policy", "poddisruptionbudgets") {
			return false
		}
	}
	return true
}

// pdbVerdict is PDBReady from the API pods' PodDisruptionBudget (nil: none), allowed
// telling whether the operator may write one, waiting when it is updated again (a step
// observed while it may not act). Always True: a budget protects the pods, and its
// absence is said, not a failure.
func pdbVerdict(api *keystonev1.KeystoneAPI, budget *policyv1.PodDisruptionBudget, allowed bool, waiting string) condition.Verdict {
	replicas := *deploy.Replicas(api)
	var msg string
	switch {
	case !allowed:
		msg = fmt.Sprintf("no poddisruptionbudget: the operator may not write them; a drain of the nodes may evict every "+
			"one of the %d API pods at once", replicas)
	case budget == nil && replicas < deploy.PDBMinReplicas:
		msg = fmt.Sprintf("no poddisruptionbudget at %d replica(s): a drain evicts the API pods, and Keystone does not answer "+
			"until a replacement is Ready (from %d replicas on, one pod at a time is evicted)", replicas, deploy.PDBMinReplicas)
	case budget == nil:
		msg = "no poddisruptionbudget yet"
	default:
		msg = fmt.Sprintf("poddisruptionbudget %s lets one of the %d API pods be evicted at a time", budget.Name, replicas)
		if budget.Status.ObservedGeneration == budget.Generation && budget.Generation > 0 {
			msg += fmt.Sprintf(" (%d may be now)", budget.Status.DisruptionsAllowed)
		}
	}
	if waiting != "" {
		msg += " " + waiting
	}
	return condition.TrueVerdict("%s", msg)
}
