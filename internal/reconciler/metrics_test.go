package reconciler

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/keystone-stepwise/keystone-operator/tests/support/testutil"
	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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

// constConditions is the collector the condition gauges were made with before
// conditionGauge: prometheus.MustNewConstMetric per series, from m's records.
type constConditions struct{ m *Metrics }

func (c constConditions) Describe(ch chan<- *prometheus.Desc) { ch <- c.m.conditions }

func (c constConditions) Collect(ch chan<- prometheus.Metric) {
	for _, o := range c.m.objects {
		for _, cond := range o.conditions {
			for _, s := range statuses {
				v := 0.0
				if cond.status == s {
					v = 1
				}
				ch <- prometheus.MustNewConstMetric(c.m.conditions, prometheus.GaugeValue, v, o.kind, o.namespace, o.name,
					string(cond.condType), string(s))
			}
		}
	}
}

// observeMany records n objects of two kinds, in two namespaces, with conditions of
// every status.
func observeMany(m *Metrics, n int) {
	for i := range n {
		obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: fmt.Sprintf("ns-%d", i%2), Name: fmt.Sprintf("o-%d", i),
			UID: types.UID(fmt.Sprintf("u-%d", i)), Generation: 1}}
		m.Observe([]string{"KeystoneService", "KeystoneEndpoint"}[i%2], obj, lc.Conditions{
			{Type: lc.ReadyCondition, Status: []corev1.ConditionStatus{"True", "False", "Unknown"}[i%3]},
			{Type: "StepReady", Status: corev1.ConditionTrue},
			{Type: "OtherStepReady", Status: corev1.ConditionUnknown},
		}, nil)
	}
}

// TestConditionGaugesAsConstMetrics: the condition gauges expose what
// prometheus.MustNewConstMetric made of the same records, byte for byte, in every
// scrape (the shared label pairs and values stay as they were).
func TestConditionGaugesAsConstMetrics(t *testing.T) {
	g := NewWithT(t)
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg, time.Now)
	observeMany(m, 50)
	want := prometheus.NewRegistry()
	want.MustRegister(constConditions{m})
	for range 3 {
		got, err := exposition(reg, "keystone_operator_condition")
		g.Expect(err).NotTo(HaveOccurred())
		expected, err := exposition(want, "keystone_operator_condition")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got).To(ContainSubstring(`keystone_operator_condition{kind="KeystoneEndpoint",name="o-1",namespace="ns-1",status="False",type="Ready"} 1`))
		g.Expect(got).To(Equal(expected))
	}
}

// TestConditionGaugesSharedAcrossScrapes: concurrent scrapes in every format
// controller-runtime's metrics server answers in (its promhttp handler: text, and
// protobuf delimited, as text and as compact text), and concurrent gathers through a
// registerer that adds a label (prometheus.WrapRegistererWith appends it to each
// series' labels and sorts them), leave the shared label pairs and values as they
// were: each wrapped gather exposes what MustNewConstMetric's series wrapped alike do,
// byte for byte, and so does a last plain scrape.
func TestConditionGaugesSharedAcrossScrapes(t *testing.T) {
	g := NewWithT(t)
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg, time.Now)
	observeMany(m, 400)
	cluster := prometheus.Labels{"cluster": "a"}
	wrapped, wrappedWant := prometheus.NewRegistry(), prometheus.NewRegistry()
	prometheus.WrapRegistererWith(cluster, wrapped).MustRegister(m)
	prometheus.WrapRegistererWith(cluster, wrappedWant).MustRegister(constConditions{m})
	want := prometheus.NewRegistry()
	want.MustRegister(constConditions{m})
	expected, err := exposition(want, "keystone_operator_condition")
	g.Expect(err).NotTo(HaveOccurred())
	expectedWrapped, err := exposition(wrappedWant, "keystone_operator_condition")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(expectedWrapped).To(ContainSubstring(`{cluster="a",kind="KeystoneEndpoint",name="o-1",`))

	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}))
	defer srv.Close()
	const protobuf = "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding="
	formats := map[string]string{"text/plain; version=0.0.4": "text/plain", protobuf + "delimited": "encoding=delimited",
		protobuf + "text": "encoding=text", protobuf + "compact-text": "encoding=compact-text"}
	var wg sync.WaitGroup
	errs := make(chan error, 4*(len(formats)+1))
	for range 4 {
		for accept, contentType := range formats {
			wg.Go(func() { errs <- scrape(srv.URL, accept, contentType) })
		}
		wg.Go(func() {
			got, err := exposition(wrapped, "keystone_operator_condition")
			if err == nil && got != expectedWrapped {
				err = fmt.Errorf("a wrapped gather exposed other series than MustNewConstMetric's wrapped alike")
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		g.Expect(err).NotTo(HaveOccurred())
	}
	got, err := exposition(reg, "keystone_operator_condition")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(expected))
}

// scrape reads url's metrics, asking for the format accept, and fails unless the
// answer is OK, of a content type that contains contentType, and has the condition
// gauges.
func scrape(url, accept, contentType string) error {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", accept)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err == nil && (resp.StatusCode != http.StatusOK || !strings.Contains(resp.Header.Get("Content-Type"), contentType) ||
		!bytes.Contains(body, []byte("keystone_operator_condition"))) {
		err = fmt.Errorf("scrape as %s: %s, %s, %d bytes without the condition gauges", accept, resp.Status,
			resp.Header.Get("Content-Type"), len(body))
	}
	return err
}

// BenchmarkConditionGauges gathers the condition gauges of 2,000 objects of three
// conditions each (18,000 series): `go test -run - -bench ConditionGauges
// -benchmem ./internal/reconciler`, against BenchmarkConstConditionGauges, the same
// made with prometheus.MustNewConstMetric.
func BenchmarkConditionGauges(b *testing.B) {
	reg := prometheus.NewRegistry()
	observeMany(NewMetrics(reg, time.Now), 2000)
	benchmarkGather(b, reg)
}

func BenchmarkConstConditionGauges(b *testing.B) {
	m := NewMetrics(prometheus.NewRegistry(), time.Now)
	observeMany(m, 2000)
	reg := prometheus.NewRegistry()
	reg.MustRegister(constConditions{m})
	benchmarkGather(b, reg)
}

func benchmarkGather(b *testing.B, reg *prometheus.Registry) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := reg.Gather(); err != nil {
			b.Fatal(err)
		}
	}
}

// exposition is the text exposition of the family name that g gathers.
func exposition(g prometheus.Gatherer, name string) (string, error) {
	families, err := g.Gather()
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	for _, f := range families {
		if f.GetName() == name {
			if _, err := expfmt.MetricFamilyToText(&buf, f); err != nil {
				return "", err
			}
		}
	}
	return buf.String(), nil
}
