package reconciler

import (
	"sync"
	"time"

	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Metrics exports one gauge per condition (1 for its current status, 0 for the
// others) and a histogram of the time from the first reconcile of a generation to
// the first reconcile that found it Ready. The gauges are made when Prometheus
// scrapes, from one small record per object: kept as a GaugeVec, their three series
// per condition and their label pairs were half of the manager's heap with 2,000
// converged objects (BENCHMARKS.md, memory).
type Metrics struct {
	conditions *prometheus.Desc
	deadlines  *prometheus.Desc
	deletions  *prometheus.Desc
	toReady    *prometheus.HistogramVec
	now        func() time.Time

	mu      sync.Mutex
	pending map[types.UID]generationSeen
	objects map[types.UID]observed
}

// observed is what the gauges of one object are made from.
type observed struct {
	kind, namespace, name string
	conditions            []typeStatus
	deadlines             []Deadline
	// deleting is when the object's deletion was requested; zero while it is not.
	deleting time.Time
}

// Deadline is a point in time an object reports for alerting: a credential's expiry, a
// rotation due.
type Deadline struct {
	// Name is the deadline label: expiresAt, rotationEligibleAt, fernetRotation.
	Name string
	At   time.Time
}

type typeStatus struct {
	condType lc.Type
	status   corev1.ConditionStatus
}

type generationSeen struct {
	generation int64
	since      time.Time
}

var statuses = []corev1.ConditionStatus{corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionUnknown}

// conditionGauge is one series of keystone_operator_condition. A scrape with 1,000
// registrations (2,000 objects) makes about 33,000: each made with
// prometheus.MustNewConstMetric allocated five label pairs and their strings, and the
// scrape's garbage raised the manager's RSS (docs/benchmarks.md, row 7). Its label pairs
// are shared instead: an object's kind, name and namespace by its series, a condition's
// type by its three, and the statuses and the two values by all. Collected and encoded
// only, nothing writes them: the registry copies a label slice it must sort, and a
// registerer that adds labels (prometheus.WrapRegistererWith) appends them to the
// series' slice and sorts it, which is why each slice's capacity ends at its five
// labels (Collect): that append makes a new array instead of writing over the next
// series' labels.
type conditionGauge struct {
	desc   *prometheus.Desc
	labels []*dto.LabelPair
	gauge  *dto.Gauge
}

func (g conditionGauge) Desc() *prometheus.Desc { return g.desc }

func (g conditionGauge) Write(out *dto.Metric) error {
	out.Label, out.Gauge = g.labels, g.gauge
	return nil
}

// statusPairs are the status label pairs of statuses, in their order; gaugeOne and
// gaugeZero a condition gauge's two values.
var (
	statusPairs = func() []*dto.LabelPair {
		pairs := make([]*dto.LabelPair, len(statuses))
		for i, s := range statuses {
			pairs[i] = labelPair("status", string(s))
		}
		return pairs
	}()
	gaugeOne, gaugeZero = &dto.Gauge{Value: new(1.0)}, &dto.Gauge{Value: new(0.0)}
)

// labelPair is the label name=value.
func labelPair(name, value string) *dto.LabelPair {
	return &dto.LabelPair{Name: new(name), Value: new(value)}
}

// NewMetrics creates the collectors and registers them with reg.
func NewMetrics(reg prometheus.Registerer, now func() time.Time) *Metrics {
	m := &Metrics{
		conditions: prometheus.NewDesc("keystone_operator_condition",
			"1 when the object's condition has this status, else 0.",
			[]string{"kind", "namespace", "name", "type", "status"}, nil),
		deadlines: prometheus.NewDesc("keystone_operator_deadline_timestamp_seconds",
			"When the object's deadline falls, in seconds since the epoch: an application credential's expiresAt and "+
				"rotationEligibleAt, a KeystoneAPI's next fernetRotation.",
			[]string{"kind", "namespace", "name", "deadline"}, nil),
		deletions: prometheus.NewDesc("keystone_operator_deletion_timestamp_seconds",
			"When the deletion of an object that still waits for its clean-up was requested, in seconds since the epoch.",
			[]string{"kind", "namespace", "name"}, nil),
		toReady: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "keystone_operator", Name: "generation_ready_seconds",
			Help:    "Time from the first reconcile of a generation to the one that found it Ready.",
			Buckets: prometheus.ExponentialBuckets(0.05, 2, 14),
		}, []string{"kind"}),
		now:     now,
		pending: map[types.UID]generationSeen{},
		objects: map[types.UID]observed{},
	}
	reg.MustRegister(m, m.toReady)
	return m
}

// Describe sends the gauges' descriptions (prometheus.Collector).
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- m.conditions
	ch <- m.deadlines
	ch <- m.deletions
}

// Collect sends the condition gauges of every object observed (prometheus.Collector).
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	m.mu.Lock()
	defer m.mu.Unlock()
	series := 0
	for _, o := range m.objects {
		series += len(o.conditions) * len(statuses)
	}
	// The label slices of every condition gauge, carved from one array, each one's
	// capacity ending at its five labels (see conditionGauge).
	labels := make([]*dto.LabelPair, 0, series*5)
	for _, o := range m.objects {
		kind, name, namespace := labelPair("kind", o.kind), labelPair("name", o.name), labelPair("namespace", o.namespace)
		for _, c := range o.conditions {
			condType := labelPair("type", string(c.condType))
			for i, s := range statuses {
				gauge := gaugeZero
				if c.status == s {
					gauge = gaugeOne
				}
				// In the order of their names, as the registry wants them.
				labels = append(labels, kind, name, namespace, statusPairs[i], condType)
				ch <- conditionGauge{desc: m.conditions, labels: labels[len(labels)-5 : len(labels) : len(labels)], gauge: gauge}
			}
		}
		for _, d := range o.deadlines {
			ch <- prometheus.MustNewConstMetric(m.deadlines, prometheus.GaugeValue, float64(d.At.Unix()),
				o.kind, o.namespace, o.name, d.Name)
		}
		if !o.deleting.IsZero() {
			ch <- prometheus.MustNewConstMetric(m.deletions, prometheus.GaugeValue, float64(o.deleting.Unix()),
				o.kind, o.namespace, o.name)
		}
	}
}

// Observe records the conditions and deadlines of obj after a reconcile; nil deadlines
// keep the last ones recorded.
func (m *Metrics) Observe(kind string, obj client.Object, conds lc.Conditions, deadlines []Deadline) {
	m.mu.Lock()
	defer m.mu.Unlock()
	uid := obj.GetUID()
	o := m.objects[uid]
	o.kind, o.namespace, o.name = kind, obj.GetNamespace(), obj.GetName()
	o.deleting = time.Time{}
	if t := obj.GetDeletionTimestamp(); t != nil {
		o.deleting = t.Time
	}
	o.conditions = o.conditions[:0]
	for _, c := range conds {
		o.conditions = append(o.conditions, typeStatus{c.Type, c.Status})
	}
	// nil: not evaluated this round (the phases failed); the last ones stand.
	if deadlines != nil {
		o.deadlines = o.deadlines[:0]
		for _, d := range deadlines {
			if !d.At.IsZero() {
				o.deadlines = append(o.deadlines, d)
			}
		}
	}
	m.objects[uid] = o

	seen, ok := m.pending[uid]
	if !ok || seen.generation != obj.GetGeneration() {
		seen = generationSeen{generation: obj.GetGeneration(), since: m.now()}
		m.pending[uid] = seen
	}
	if conds.IsTrue(condition.ReadyCondition) && !seen.since.IsZero() {
		m.toReady.WithLabelValues(kind).Observe(m.now().Sub(seen.since).Seconds())
		m.pending[uid] = generationSeen{generation: seen.generation}
	}
}

// Forget drops the series of a deleted object.
func (m *Metrics) Forget(obj client.Object) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.objects, obj.GetUID())
	delete(m.pending, obj.GetUID())
}

// ForgetNamed drops the series of the objects of kind, namespace and name (an object
// that went while its series were kept: its finalizer removed by hand) and returns
// their UIDs.
func (m *Metrics) ForgetNamed(kind, namespace, name string) []types.UID {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var uids []types.UID
	for uid, o := range m.objects {
		if o.kind == kind && o.namespace == namespace && o.name == name {
			uids = append(uids, uid)
			delete(m.objects, uid)
			delete(m.pending, uid)
		}
	}
	return uids
}
