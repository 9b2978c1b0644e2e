package functional

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/keystone-stepwise/keystone-operator/tests/support/controlplane"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/yaml"
)

// exported records what the manager's /metrics showed when specs scraped it
// (scrapeSeries): each series of ours as its name and the labels an alert or a
// dashboard selects on (kind, type, status, deadline), without namespace and name.
var exported = struct {
	sync.Mutex
	series map[string]bool
}{series: map[string]bool{}}

// selectedLabels are the labels whose values the alerts and the dashboard select on.
var selectedLabels = []string{"kind", "type", "status", "deadline"}

// scrapeSeries scrapes the manager's metrics as Prometheus does (GET /metrics of its
// registry) and records every keystone_operator series in exported.
func scrapeSeries() {
	GinkgoHelper()
	srv := httptest.NewServer(promhttp.HandlerFor(metrics.Registry, promhttp.HandlerOpts{}))
	defer srv.Close()
	resp, err := http.Get(srv.URL) //nolint:noctx // a test server
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	exported.Lock()
	defer exported.Unlock()
	for family, f := range families {
		if !strings.HasPrefix(family, "keystone_operator_") {
			continue
		}
		names := []string{family}
		if f.GetType() == dto.MetricType_HISTOGRAM {
			names = []string{family + "_bucket", family + "_sum", family + "_count"}
		}
		for _, name := range names {
			for _, m := range f.GetMetric() {
				labels := map[string]string{}
				for _, l := range m.GetLabel() {
					labels[l.GetName()] = l.GetValue()
				}
				exported.series[seriesShape(name, labels)] = true
			}
			exported.series[name] = true
		}
	}
}

// seriesShape is a series' name and its selected labels, as exported records it.
func seriesShape(name string, labels map[string]string) string {
	parts := []string{name}
	for _, l := range selectedLabels {
		if v, ok := labels[l]; ok {
			parts = append(parts, l+"="+v)
		}
	}
	return strings.Join(parts, " ")
}

// selector matches one vector selector of ours in PromQL: a name and its matchers.
var (
	selector = regexp.MustCompile(`(keystone_operator_[a-z_]+)(\{[^}]*\})?`)
	matcher  = regexp.MustCompile(`([a-z_]+)\s*=\s*"([^"]*)"`)
)

// unexported lists the selectors in exprs that select no series the manager exported:
// a name it never exported, or equality matchers on the selected labels that no
// exported series of that name has all at once.
func unexported(exprs []string) []string {
	exported.Lock()
	defer exported.Unlock()
	var missing []string
	for _, expr := range exprs {
		for _, sel := range selector.FindAllStringSubmatch(expr, -1) {
			name, want := sel[1], map[string]string{}
			for _, m := range matcher.FindAllStringSubmatch(sel[2], -1) {
				want[m[1]] = m[2]
			}
			if !exported.series[name] || !anyExported(name, want) {
				missing = append(missing, sel[0])
			}
		}
	}
	sort.Strings(missing)
	return missing
}

func anyExported(name string, want map[string]string) bool {
	for shape := range exported.series {
		fields := strings.Fields(shape)
		if fields[0] != name {
			continue
		}
		have := map[string]string{}
		for _, f := range fields[1:] {
			k, v, _ := strings.Cut(f, "=")
			have[k] = v
		}
		if matches(have, want) {
			return true
		}
	}
	return false
}

// matches tells whether a series with the selected labels have satisfies the matchers
// want on those labels (matchers on namespace or name, which exported drops, pass).
func matches(have, want map[string]string) bool {
	for _, l := range selectedLabels {
		if v, ok := want[l]; ok && have[l] != v {
			return false
		}
	}
	return true
}

// prometheusRule is the part of config/prometheus/prometheusrule.yaml the checks read.
type prometheusRule struct {
	Spec struct {
		Groups []struct {
			Rules []struct {
				Alert string `json:"alert"`
				Expr  string `json:"expr"`
			} `json:"rules"`
		} `json:"groups"`
	} `json:"spec"`
}

// alertTests is the part of config/prometheus/tests/alerts_test.yaml the checks read.
type alertTests struct {
	Tests []struct {
		InputSeries []struct {
			Series string `json:"series"`
		} `json:"input_series"`
	} `json:"tests"`
}

// dashboardExprs returns every query of the Grafana dashboard.
func dashboardExprs(path string) []string {
	GinkgoHelper()
	data, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	var out []string
	for _, m := range regexp.MustCompile(`"expr":\s*"((?:[^"\\]|\\.)*)"`).FindAllStringSubmatch(string(data), -1) {
		out = append(out, strings.ReplaceAll(m[1], `\"`, `"`))
	}
	Expect(out).NotTo(BeEmpty(), "no query in %s", path)
	return out
}

// checkMonitoring runs promtool on the alerts and checks that every series the alerts,
// their tests and the dashboard read is one the manager exported during the suite.
func checkMonitoring() {
	GinkgoHelper()
	root, err := controlplane.RepoRoot()
	Expect(err).NotTo(HaveOccurred())
	dir := filepath.Join(root, "config", "prometheus")

	data, err := os.ReadFile(filepath.Join(dir, "prometheusrule.yaml"))
	Expect(err).NotTo(HaveOccurred())
	rule := prometheusRule{}
	Expect(yaml.Unmarshal(data, &rule)).To(Succeed())
	var spec map[string]any
	Expect(yaml.Unmarshal(data, &spec)).To(Succeed())
	rules, err := yaml.Marshal(spec["spec"])
	Expect(err).NotTo(HaveOccurred())
	work := GinkgoT().TempDir()
	Expect(os.WriteFile(filepath.Join(work, "rules.yaml"), rules, 0o600)).To(Succeed())
	tests, err := os.ReadFile(filepath.Join(dir, "tests", "alerts_test.yaml"))
	Expect(err).NotTo(HaveOccurred())
	Expect(os.WriteFile(filepath.Join(work, "alerts_test.yaml"), tests, 0o600)).To(Succeed()) //nolint:gosec // a temporary directory of the test's
	promtool, err := exec.LookPath("promtool")
	Expect(err).NotTo(HaveOccurred(), "promtool (Debian's prometheus package): make test installs it with hack/debian-deps.sh monitoring")
	for _, args := range [][]string{{"check", "rules", "rules.yaml"}, {"test", "rules", "alerts_test.yaml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = work
		out, err := cmd.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "promtool %s:\n%s", strings.Join(args, " "), out)
	}

	var exprs []string
	for _, g := range rule.Spec.Groups {
		for _, r := range g.Rules {
			exprs = append(exprs, r.Expr)
		}
	}
	at := alertTests{}
	Expect(yaml.Unmarshal(tests, &at)).To(Succeed())
	for _, t := range at.Tests {
		for _, s := range t.InputSeries {
			exprs = append(exprs, s.Series)
		}
	}
	exprs = append(exprs, dashboardExprs(filepath.Join(root, "config", "grafana", "keystone-operator.json"))...)
	Expect(unexported(exprs)).To(BeEmpty(), "selectors of the alerts, their tests or the dashboard that match no series the manager exported")
}

// checkMonitoringAfterSuite runs checkMonitoring when every spec ran: the series come
// from all of them.
func checkMonitoringAfterSuite() {
	suite, _ := GinkgoConfiguration()
	if len(suite.FocusStrings) > 0 || len(suite.SkipStrings) > 0 || suite.LabelFilter != "" || len(suite.FocusFiles) > 0 {
		GinkgoWriter.Println("monitoring: not checked, as only some specs ran (the series come from all of them)")
		return
	}
	checkMonitoring()
}
