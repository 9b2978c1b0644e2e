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
	}, nil)
	g.Expect(conditionSeries(g, reg)).To(ConsistOf(
		"Kind ns/a Ready False=1", "Kind ns/a Ready True=0", "Kind ns/a Ready Unknown=0",
		"Kind ns/a StepReady False=0", "Kind ns/a StepReady True=1", "Kind ns/a StepReady Unknown=0"))

	m.Observe("Kind", obj, lc.Conditions{{Type: lc.ReadyCondition, Status: corev1.ConditionTrue}}, nil)
	g.Expect(conditionSeries(g, reg)).To(ConsistOf(
		"Kind ns/a Ready False=0", "Kind ns/a Ready True=1", "Kind ns/a Ready Unknown=0"),
		"a condition no longer reported loses its series; the others follow their status")

	m.Forget(obj)
	g.Expect(conditionSeries(g, reg)).To(BeEmpty(), "a forgotten object has no series")

	m.Observe("Kind", obj, lc.Conditions{{Type: lc.ReadyCondition, Status: corev1.ConditionFalse}}, nil)
	g.Expect(m.ForgetNamed("Other", "ns", "a")).To(BeEmpty(), "another kind's object of that name")
	g.Expect(m.ForgetNamed("Kind", "ns", "a")).To(ConsistOf(obj.UID))
	g.Expect(conditionSeries(g, reg)).To(BeEmpty(), "forgotten by name, as when it went while its series were kept")
}

func TestMetricsDeadlines(t *testing.T) {
	g := NewWithT(t)
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg, time.Now)
	deadlines := func() map[string]float64 {
		series, err := testutil.DeadlineSeries(reg)
		g.Expect(err).NotTo(HaveOccurred())
		return series
	}
	obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ac", UID: "u1"}}
	expires := time.Date(2027, 5, 28, 10, 0, 0, 0, time.UTC)
	ready := lc.Conditions{{Type: lc.ReadyCondition, Status: corev1.ConditionTrue}}
	m.Observe("Kind", obj, ready, []Deadline{{Name: "expiresAt", At: expires}, {Name: "rotationEligibleAt"}})
	g.Expect(deadlines()).To(Equal(map[string]float64{"Kind ns/ac expiresAt": float64(expires.Unix())}),
		"in seconds since the epoch; an unset time has no series")

	m.Observe("Kind", obj, ready, nil)
	g.Expect(deadlines()).To(HaveLen(1), "a round that did not evaluate them keeps the last ones")
	m.Observe("Kind", obj, ready, []Deadline{})
	g.Expect(deadlines()).To(BeEmpty(), "a round that has none drops them")

	deleting := metav1.NewTime(time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC))
	obj.DeletionTimestamp = &deleting
	m.Observe("Kind", obj, ready, nil)
	deletions, err := testutil.DeletionSeries(reg)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(deletions).To(Equal(map[string]float64{"Kind ns/ac": float64(deleting.Unix())}), "a deletion waiting for its clean-up")
}
