//go:build bench

package bench

import (
	"fmt"
	"net/http"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/rest"
)

// apiserverCounts is what the API server's own metrics say it has answered, from one
// reading of its metrics page: what every client (the operator, the bench, the API
// server's own controllers) made it do.
type apiserverCounts struct {
	// writes counts the mutating requests (apiserver_request_total), by "VERB
	// resource[/subresource] code".
	writes map[string]float64
	// reads counts the GETs and LISTs of resources alike: not a WATCH, open for as long as
	// its client keeps it, nor a GET of a path that names no resource (/readyz).
	reads map[string]float64
	// seconds sums the seconds spent answering requests of resources, reads too but not
	// WATCHes (apiserver_request_duration_seconds), by "VERB resource[/subresource]".
	seconds map[string]float64
}

// apiserverRequests reads the API server's counts (apiserverCounts).
func apiserverRequests(cfg *rest.Config) apiserverCounts {
	families := apiserverMetrics(cfg)
	c := apiserverCounts{writes: map[string]float64{}, reads: map[string]float64{}, seconds: map[string]float64{}}
	for _, m := range families["apiserver_request_total"].GetMetric() {
		labels := labelsOf(m)
		key := labels["verb"] + " " + resourceOf(labels) + " " + labels["code"]
		switch labels["verb"] {
		case "POST", "PUT", "PATCH", "DELETE", "APPLY", "DELETECOLLECTION":
			c.writes[key] += m.GetCounter().GetValue()
		case "GET", "LIST":
			if labels["resource"] != "" {
				c.reads[key] += m.GetCounter().GetValue()
			}
		}
	}
	for _, m := range families["apiserver_request_duration_seconds"].GetMetric() {
		labels := labelsOf(m)
		// A watch's duration is how long it stayed open.
		if labels["verb"] != "WATCH" && labels["resource"] != "" {
			c.seconds[labels["verb"]+" "+resourceOf(labels)] += m.GetHistogram().GetSampleSum()
		}
	}
	return c
}

// apiserverMetrics is the API server's metrics page, parsed.
func apiserverMetrics(cfg *rest.Config) map[string]*dto.MetricFamily {
	resp := apiserverGet(cfg, "/metrics")
	defer func() { _ = resp.Body.Close() }()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	must(err)
	return families
}

// apiserverGet GETs path from the API server with cfg's credentials; the caller closes
// the body.
func apiserverGet(cfg *rest.Config, path string) *http.Response {
	hc, err := rest.HTTPClientFor(cfg)
	must(err)
	resp, err := hc.Get(strings.TrimSuffix(cfg.Host, "/") + path)
	must(err)
	return resp
}

func labelsOf(m *dto.Metric) map[string]string {
	labels := map[string]string{}
	for _, l := range m.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	return labels
}

// resourceOf names a request's resource as "resource[/subresource]".
func resourceOf(labels map[string]string) string {
	if labels["subresource"] != "" {
		return labels["resource"] + "/" + labels["subresource"]
	}
	return labels["resource"]
}

// perItem describes the growth of a count from before to after, per one of n items
// (registrations, rollouts), largest first ("PATCH keystoneservices 200 3.01, ..."),
// with unit after each figure.
func perItem(after, before map[string]float64, n int, unit string) string {
	type entry struct {
		key string
		v   float64
	}
	var entries []entry
	total := 0.0
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			entries = append(entries, entry{k, d / float64(n)})
			total += d / float64(n)
		}
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].v > entries[j].v })
	parts := []string{fmt.Sprintf("%.2f%s in all", total, unit)}
	for _, e := range entries {
		parts = append(parts, fmt.Sprintf("%s %.2f%s", e.key, e.v, unit))
	}
	return strings.Join(parts, ", ")
}
