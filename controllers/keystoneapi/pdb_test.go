package keystoneapi

import (
	"testing"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	. "github.com/onsi/gomega"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestPDBVerdict(t *testing.T) {
	g := NewWithT(t)
	api := func(replicas int32) *keystonev1.KeystoneAPI {
		return &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Name: "keystone"},
			Spec: keystonev1.KeystoneAPISpec{Replicas: ptr.To(replicas)}}
	}
	g.Expect(deploy.PodDisruptionBudget(api(1))).To(BeNil(), "one replica: no budget, which would block every drain of its node")
	g.Expect(deploy.PodDisruptionBudget(api(0))).To(BeNil())
	budget := deploy.PodDisruptionBudget(api(3))
	g.Expect(budget.Spec.MaxUnavailable.IntValue()).To(Equal(1))

	g.Expect(brief(pdbVerdict(api(1), nil, true, ""))).To(Equal(verdictOf{true, "", "", "no poddisruptionbudget at 1 replica(s): a " +
		"drain evicts the API pods, and Keystone does not answer until a replacement is Ready (from 2 replicas on, one pod at a " +
		"time is evicted)"}))
	g.Expect(brief(pdbVerdict(api(3), budget, true, ""))).To(Equal(verdictOf{true, "", "",
		"poddisruptionbudget keystone lets one of the 3 API pods be evicted at a time"}))
	budget.Generation, budget.Status = 2, policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 2, DisruptionsAllowed: 1}
	g.Expect(brief(pdbVerdict(api(3), budget, true, "(updated once DBSyncReady is True)"))).To(Equal(verdictOf{true, "", "",
		"poddisruptionbudget keystone lets one of the 3 API pods be evicted at a time (1 may be now) (updated once DBSyncReady is True)"}))
	g.Expect(brief(pdbVerdict(api(2), nil, false, ""))).To(Equal(verdictOf{true, "", "", "no poddisruptionbudget: the operator " +
		"may not write them; a drain of the nodes may evict every one of the 2 API pods at once"}))
}
