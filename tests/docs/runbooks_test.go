package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRunbooks: every alert has a runbook_url, and it names a section of
// docs/monitoring.md (GitHub's anchor of a "### <alert>" heading).
func TestRunbooks(t *testing.T) {
	root := repoRoot(t)
	rules, err := os.ReadFile(filepath.Join(root, "config", "prometheus", "prometheusrule.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(root, "docs", "monitoring.md"))
	if err != nil {
		t.Fatal(err)
	}
	alerts := regexp.MustCompile(`(?m)^    - alert: (\w+)$`).FindAllStringSubmatch(string(rules), -1)
	runbooks := regexp.MustCompile(`(?m)^        runbook_url: \S+/docs/monitoring\.md#([a-z0-9-]+)$`).FindAllStringSubmatch(string(rules), -1)
	if len(alerts) == 0 || len(runbooks) != len(alerts) {
		t.Fatalf("%d alerts and %d runbook_url: one each", len(alerts), len(runbooks))
	}
	for i, alert := range alerts {
		if want := strings.ToLower(alert[1]); runbooks[i][1] != want {
			t.Errorf("alert %s: runbook_url points at #%s, not #%s", alert[1], runbooks[i][1], want)
		}
		if !strings.Contains(string(page), "\n### "+alert[1]+"\n") {
			t.Errorf("alert %s: docs/monitoring.md has no section ### %s", alert[1], alert[1])
		}
	}
}
