package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/keystone-stepwise/keystone-operator/tests/support/controlplane"
)

// keystoneAttributes are names of this suite's attributes on Keystone's entities
// (identity.OwnerAttribute, identity.PasswordFromAttribute), not metrics.
var keystoneAttributes = map[string]bool{"keystone_operator_owner": true, "keystone_operator_password_from": true}

// TestMetricsExist: every metric the docs, the alerts and the dashboard name is one the
// operator exports (declared in its Go code, with Prometheus's histogram suffixes).
func TestMetricsExist(t *testing.T) {
	root := repoRoot(t)
	declared := readAll(t, root, "internal/*/*.go", "cmd/*/*.go", "controllers/*/*.go", "pkg/*/*.go")
	metric := regexp.MustCompile(`keystone_operator_[a-z_]+`)
	named := metric.FindAllString(readAll(t, root, "README.md", "docs/*.md", "config/prometheus/*.yaml",
		"config/prometheus/tests/*.yaml", "config/grafana/*.json"), -1)
	seen := 0
	for _, name := range named {
		if keystoneAttributes[name] {
			continue
		}
		seen++
		if !exported(declared, name) {
			t.Errorf("%s is named in the docs, alerts or dashboard, and the operator does not export it", name)
		}
	}
	if seen == 0 {
		t.Fatal("no metric named in the docs, alerts or dashboard: the search is broken")
	}
}

// exported tells whether the code (declared) declares metric, whole or as a
// keystone_operator namespace and a name, with or without a histogram's suffix.
func exported(declared, metric string) bool {
	for _, suffix := range []string{"_bucket", "_sum", "_count", ""} {
		if base, ok := strings.CutSuffix(metric, suffix); ok {
			name := strings.TrimPrefix(base, "keystone_operator_")
			if strings.Contains(declared, `"`+base+`"`) || strings.Contains(declared, `Name: "`+name+`"`) {
				return true
			}
		}
	}
	return false
}

// readAll concatenates the files the patterns (relative to root) match, tests aside.
// repoRoot is the repository's root, where the docs and the code they describe are.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := controlplane.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func readAll(t *testing.T, root string, patterns ...string) string {
	t.Helper()
	var out strings.Builder
	for _, pattern := range patterns {
		files, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			out.Write(data)
		}
	}
	return out.String()
}
