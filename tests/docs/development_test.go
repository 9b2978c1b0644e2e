package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestMakeTestPackagesListed: docs/development.md names every Debian package make test
// installs, read from the groups the Makefile's debian-deps target passes to
// hack/debian-deps.sh.
func TestMakeTestPackagesListed(t *testing.T) {
	root := repoRoot(t)
	makefile := readAll(t, root, "Makefile")
	target := regexp.MustCompile(`(?m)^debian-deps:.*\n((?:\t.*\n)+)`).FindStringSubmatch(makefile)
	if target == nil {
		t.Fatal("the Makefile has no debian-deps target")
	}
	groups := regexp.MustCompile(`hack/debian-deps\.sh (\w+)`).FindAllStringSubmatch(target[1], -1)
	if len(groups) == 0 {
		t.Fatal("the debian-deps target runs no hack/debian-deps.sh group")
	}
	script := readAll(t, root, "hack/debian-deps.sh")
	doc := readAll(t, root, "docs/development.md")
	_, para, found := strings.Cut(doc, "`make test` builds what the tests need")
	if !found {
		t.Fatal("docs/development.md has no paragraph on what make test builds and installs")
	}
	para, _, _ = strings.Cut(para, "\n\n")
	for _, g := range groups {
		list := regexp.MustCompile(`(?m)^` + g[1] + `\) packages=\(([^)]*)\)`).FindStringSubmatch(script)
		if list == nil {
			t.Fatalf("hack/debian-deps.sh has no group %s", g[1])
		}
		for _, pkg := range strings.Fields(list[1]) {
			if !strings.Contains(para, "`"+pkg+"`") {
				t.Errorf("docs/development.md's make test paragraph does not name %s (hack/debian-deps.sh %s)", pkg, g[1])
			}
		}
	}
}

// TestUpstreamColumnsNamed: where the README shows kubectl get's columns, it names the
// ones keystone-operator's CRD files show instead (openstack-operator installs those),
// read from those files as the conformance module pins them (downloaded: make test runs
// this package before the conformance suite).
func TestUpstreamColumnsNamed(t *testing.T) {
	root := repoRoot(t)
	dir := moduleDir(t, filepath.Join(root, "tests", "conformance"), "github.com/openstack-k8s-operators/keystone-operator/api")
	data, err := os.ReadFile(filepath.Join(dir, "bases", "keystone.openstack.org_keystoneapis.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				AdditionalPrinterColumns []struct{ Name string } `json:"additionalPrinterColumns"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &crd); err != nil || len(crd.Spec.Versions) == 0 {
		t.Fatalf("reading keystone-operator's KeystoneAPI CRD: %v", err)
	}
	readme := readAll(t, root, "README.md")
	if !strings.Contains(readme, "$ kubectl get keystoneapi") {
		t.Fatal("the README no longer shows kubectl get keystoneapi: move this test with it")
	}
	for _, column := range crd.Spec.Versions[0].AdditionalPrinterColumns {
		if !strings.Contains(readme, "`"+strings.ToUpper(column.Name)+"`") {
			t.Errorf("the README does not name keystone-operator's column %s beside its kubectl get", strings.ToUpper(column.Name))
		}
	}
}

// TestNoEnvironmentNote: the project's docs cite nothing the project does not have, such
// as a notes file of the machine it was developed on.
func TestNoEnvironmentNote(t *testing.T) {
	root := repoRoot(t)
	docs, err := filepath.Glob(filepath.Join(root, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	for _, path := range append(docs, more...) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, cited := range regexp.MustCompile(`\b[A-Z][A-Z_]+\.md\b`).FindAllString(string(data), -1) {
			if _, err := fs.Stat(os.DirFS(root), cited); err != nil {
				t.Errorf("%s cites %s, which the repository does not have", filepath.Base(path), cited)
			}
		}
	}
}

// TestE2EScenariosRestricted: as docs/development.md says, every e2e scenario's first
// command makes its namespace enforce Pod Security's restricted profile, before any pod.
func TestE2EScenariosRestricted(t *testing.T) {
	root := repoRoot(t)
	dirs, err := os.ReadDir(filepath.Join(root, "tests/e2e/scenarios"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(readAll(t, root, "docs/development.md"), "Every scenario starts by making its namespace enforce Pod Security's `restricted` profile") {
		t.Error("docs/development.md no longer says that every scenario enforces the restricted profile")
	}
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		steps, err := filepath.Glob(filepath.Join(root, "tests/e2e/scenarios", d.Name(), "00-*.yaml"))
		if err != nil || len(steps) == 0 {
			t.Errorf("scenario %s has no step 00", d.Name())
			continue
		}
		first := ""
		for _, path := range steps {
			var step struct {
				Kind     string `json:"kind"`
				Commands []struct {
					Script string `json:"script"`
				} `json:"commands"`
			}
			doc, _, _ := strings.Cut(readAll(t, root, strings.TrimPrefix(path, root+"/")), "\n---")
			if err := yaml.Unmarshal([]byte(doc), &step); err == nil && step.Kind == "TestStep" && len(step.Commands) > 0 {
				first = strings.TrimSpace(step.Commands[0].Script)
				break
			}
		}
		if first != "../../keystone.sh restricted" {
			t.Errorf("scenario %s: the first command of step 00 is %q, not ../../keystone.sh restricted", d.Name(), first)
		}
	}
}
