//go:build bench

package bench

import (
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"k8s.io/client-go/rest"
)

// requestSeries matches one series of kube-apiserver's count of the requests it
// answered (apiserver_request_total) or of the seconds it spent answering them
// (apiserver_request_duration_seconds_sum).
var requestSeries = regexp.MustCompile(`^(apiserver_request_total|apiserver_request_duration_seconds_sum)\{([^}]*)\} ([0-9.e+-]+)$`)

var requestLabel = regexp.MustCompile(`(\w+)="([^"]*)"`)

// apiserverWrites reads the API server's own count of the mutating requests it has
// answered, by "VERB resource[/subresource] code", and the seconds it spent answering
// requests, by "VERB resource[/subresource]" (reads too): what every client (the
// operator, the bench, the API server's own controllers) made it do.
func apiserverWrites(cfg *rest.Config) (count, seconds map[string]float64) {
	hc, err := rest.HTTPClientFor(cfg)
	must(err)
	resp, err := hc.Get(strings.TrimSuffix(cfg.Host, "/") + "/metrics")
	must(err)
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	must(err)
	count, seconds = map[string]float64{}, map[string]float64{}
	for _, line := range strings.Split(string(body), "\n") {
		m := requestSeries.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		labels := map[string]string{}
		for _, l := range requestLabel.FindAllStringSubmatch(m[2], -1) {
			labels[l[1]] = l[2]
		}
		v, err := strconv.ParseFloat(m[3], 64)
		must(err)
		resource := labels["resource"]
		if labels["subresource"] != "" {
			resource += "/" + labels["subresource"]
		}
		if m[1] == "apiserver_request_duration_seconds_sum" {
			if labels["verb"] != "WATCH" { // a watch's duration is how long it stayed open
				seconds[labels["verb"]+" "+resource] += v
			}
			continue
		}
		switch labels["verb"] {
		case "POST", "PUT", "PATCH", "DELETE", "APPLY", "DELETECOLLECTION":
			count[labels["verb"]+" "+resource+" "+labels["code"]] += v
		}
	}
	return count, seconds
}

// perRegistration describes the growth of a count from before to after, per one of n
// registrations, largest first ("PATCH keystoneservices 200 3.01, ..."), with unit
// after each figure.
func perRegistration(after, before map[string]float64, n int, unit string) string {
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
