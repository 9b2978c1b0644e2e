package testutil

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// ConditionSeries returns the keystone_operator_condition gauges by SeriesKey.
func ConditionSeries(g prometheus.Gatherer) (map[string]float64, error) {
	return gaugesOf(g, "keystone_operator_condition", func(l map[string]string) string {
		return SeriesKey(l["kind"], l["namespace"], l["name"], l["type"], l["status"])
	})
}

// SeriesKey is ConditionSeries' key of a series.
func SeriesKey(kind, namespace, name, condType, status string) string {
	return fmt.Sprintf("%s %s/%s %s %s", kind, namespace, name, condType, status)
}

// DeadlineSeries returns the keystone_operator_deadline_timestamp_seconds gauges by
// "kind namespace/name deadline".
func DeadlineSeries(g prometheus.Gatherer) (map[string]float64, error) {
	return gaugesOf(g, "keystone_operator_deadline_timestamp_seconds", func(l map[string]string) string {
		return fmt.Sprintf("%s %s/%s %s", l["kind"], l["namespace"], l["name"], l["deadline"])
	})
}

// DeletionSeries returns the keystone_operator_deletion_timestamp_seconds gauges by
// "kind namespace/name".
func DeletionSeries(g prometheus.Gatherer) (map[string]float64, error) {
	return gaugesOf(g, "keystone_operator_deletion_timestamp_seconds", func(l map[string]string) string {
		return fmt.Sprintf("%s %s/%s", l["kind"], l["namespace"], l["name"])
	})
}

// gaugesOf returns the gauges of the family name by key(labels).
func gaugesOf(g prometheus.Gatherer, name string, key func(map[string]string) string) (map[string]float64, error) {
	families, err := g.Gather()
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			out[key(l)] = m.GetGauge().GetValue()
		}
	}
	return out, nil
}
