package condition

import (
	"sync"
	"time"

	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Metrics exports one gauge per condition (1 for its current status, 0 for the
// others) and a histogram of the time from the first reconcile of a generation to
// the first reconcile that found it Ready.
type Metrics struct {
	conditions *prometheus.GaugeVec
	toReady    *prometheus.HistogramVec
	now        func() time.Time

	mu      sync.Mutex
	pending map[types.UID]generationSeen
	types   map[types.UID][]lc.Type
}

type generationSeen struct {
	generation int64
	since      time.Time
}

var statuses = []corev1.ConditionStatus{corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionUnknown}

// NewMetrics creates the collectors and registers them with reg.
func NewMetrics(reg prometheus.Registerer, now func() time.Time) *Metrics {
	m := &Metrics{
		conditions: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "keystone_operator", Name: "condition",
			Help: "1 when the object's condition has this status, else 0.",
		}, []string{"kind", "namespace", "name", "type", "status"}),
		toReady: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "keystone_operator", Name: "generation_ready_seconds",
			Help:    "Time from the first reconcile of a generation to the one that found it Ready.",
			Buckets: prometheus.ExponentialBuckets(0.05, 2, 14),
		}, []string{"kind"}),
		now:     now,
		pending: map[types.UID]generationSeen{},
		types:   map[types.UID][]lc.Type{},
	}
	reg.MustRegister(m.conditions, m.toReady)
	return m
}

// Observe records the conditions of obj after a reconcile.
func (m *Metrics) Observe(kind string, obj client.Object, conds lc.Conditions) {
	m.mu.Lock()
	defer m.mu.Unlock()
	uid := obj.GetUID()
	present := map[lc.Type]bool{}
	for _, c := range conds {
		present[c.Type] = true
		for _, s := range statuses {
			v := 0.0
			if c.Status == s {
				v = 1
			}
			m.conditions.WithLabelValues(kind, obj.GetNamespace(), obj.GetName(), string(c.Type), string(s)).Set(v)
		}
	}
	for _, t := range m.types[uid] {
		if !present[t] {
			m.deleteType(kind, obj, t)
		}
	}
	types := make([]lc.Type, 0, len(conds))
	for _, c := range conds {
		types = append(types, c.Type)
	}
	m.types[uid] = types

	seen, ok := m.pending[uid]
	if !ok || seen.generation != obj.GetGeneration() {
		seen = generationSeen{generation: obj.GetGeneration(), since: m.now()}
		m.pending[uid] = seen
	}
	if conds.IsTrue(ReadyCondition) && !seen.since.IsZero() {
		m.toReady.WithLabelValues(kind).Observe(m.now().Sub(seen.since).Seconds())
		m.pending[uid] = generationSeen{generation: seen.generation}
	}
}

// Forget drops the series of a deleted object.
func (m *Metrics) Forget(kind string, obj client.Object) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, t := range m.types[obj.GetUID()] {
		m.deleteType(kind, obj, t)
	}
	delete(m.types, obj.GetUID())
	delete(m.pending, obj.GetUID())
}

func (m *Metrics) deleteType(kind string, obj client.Object, t lc.Type) {
	for _, s := range statuses {
		m.conditions.DeleteLabelValues(kind, obj.GetNamespace(), obj.GetName(), string(t), string(s))
	}
}
