package testutil

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// ConditionSeries gathers keystone_operator_condition from g, by
// "kind namespace/name type status".
func ConditionSeries(g prometheus.Gatherer) (map[string]float64, error) {
	families, err := g.Gather()
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "keystone_operator_condition" {
			continue
		}
		for _, m := range f.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			out[SeriesKey(l["kind"], l["namespace"], l["name"], l["type"], l["status"])] = m.GetGauge().GetValue()
		}
	}
	return out, nil
}

// SeriesKey is ConditionSeries' key of a series.
func SeriesKey(kind, namespace, name, condType, status string) string {
	return fmt.Sprintf("%s %s/%s %s %s", kind, namespace, name, condType, status)
}
