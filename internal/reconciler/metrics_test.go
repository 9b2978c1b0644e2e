package reconciler

import (
	"fmt"
	"testing"
	"time"

	"github.com/keystone-stepwise/keystone-operator/tests/support/testutil"
	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// conditionSeries lists the condition gauges as "kind namespace/name type status=value".
func conditionSeries(g Gomega, reg *prometheus.Registry) []string {
	series, err := testutil.ConditionSeries(reg)
	g.Expect(err).NotTo(HaveOccurred())
	out := []string{}
	for k, v := range series {
		out = append(out, fmt.Sprintf("%s=%g", k, v))
	}
	return out
}

func TestMetricsSeriesFollowTheConditions(t *testing.T) {
	g := NewWithT(t)
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg, time.Now)
	obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", UID: "u1", Generation: 1}}
	m.Observe("Kind", obj, lc.Conditions{
		{Type: lc.ReadyCondition, Status: corev1.ConditionFalse},
		{Type: "StepReady", Status: corev1.ConditionTrue},
	})
	g.Expect(conditionSeries(g, reg)).To(ConsistOf(
		"Kind ns/a Ready False=1", "Kind ns/a Ready True=0", "Kind ns/a Ready Unknown=0",
		"Kind ns/a StepReady False=0", "Kind ns/a StepReady True=1", "Kind ns/a StepReady Unknown=0"))

	m.Observe("Kind", obj, lc.Conditions{{Type: lc.ReadyCondition, Status: corev1.ConditionTrue}})
	g.Expect(conditionSeries(g, reg)).To(ConsistOf(
		"Kind ns/a Ready False=0", "Kind ns/a Ready True=1", "Kind ns/a Ready Unknown=0"),
		"a condition no longer reported loses its series; the others follow their status")

	m.Forget(obj)
	g.Expect(conditionSeries(g, reg)).To(BeEmpty(), "a forgotten object has no series")

	m.Observe("Kind", obj, lc.Conditions{{Type: lc.ReadyCondition, Status: corev1.ConditionFalse}})
	g.Expect(m.ForgetNamed("Other", "ns", "a")).To(BeEmpty(), "another kind's object of that name")
	g.Expect(m.ForgetNamed("Kind", "ns", "a")).To(ConsistOf(obj.UID))
	g.Expect(conditionSeries(g, reg)).To(BeEmpty(), "forgotten by name, as when it went while its series were kept")
}
