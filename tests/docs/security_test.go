package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestSecurityRowsNameTests: every row of docs/security.md's threat table names at least
// one test, and every test it names exists: a file path in backquotes, followed by the
// quoted titles of its Ginkgo specs or the backquoted names of its Go tests, each found
// in that file.
func TestSecurityRowsNameTests(t *testing.T) {
	root := repoRoot(t)
	rows := 0
	for _, line := range strings.Split(readAll(t, root, "docs/security.md"), "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| ---") || strings.HasPrefix(line, "| written by") {
			continue
		}
		rows++
		checkSecurityRow(t, root, strings.Split(line, " | "))
	}
	if rows < 10 {
		t.Fatalf("read %d rows of docs/security.md's table only", rows)
	}
}

var (
	testFile = regexp.MustCompile("`((?:tests|internal|controllers|cmd|pkg|apis)/[^`]+_test\\.go)`")
	goTest   = regexp.MustCompile("`(Test[A-Za-z0-9_]+)`")
	specName = regexp.MustCompile(`"([^"]+)"`)
)

// checkSecurityRow checks that the last cell of a row of the threat table names tests,
// each a file followed by spec titles or Go test names it holds.
func checkSecurityRow(t *testing.T, root string, cells []string) {
	t.Helper()
	tests := cells[len(cells)-1]
	files := testFile.FindAllStringSubmatchIndex(tests, -1)
	if len(files) == 0 && !strings.Contains(tests, "the rows above") {
		t.Errorf("a row names no test: %s", cells[0])
		return
	}
	for i, f := range files {
		path := tests[f[2]:f[3]]
		src, err := os.ReadFile(filepath.Join(root, filepath.Clean(path)))
		if err != nil {
			t.Errorf("row %q names %s: %v", cells[0], path, err)
			continue
		}
		end := len(tests)
		if i+1 < len(files) {
			end = files[i+1][0]
		}
		named := tests[f[1]:end]
		for _, m := range specName.FindAllStringSubmatch(named, -1) {
			if !strings.Contains(string(src), `"`+m[1]+`"`) {
				t.Errorf("row %q: %s has no spec %q", cells[0], path, m[1])
			}
		}
		for _, m := range goTest.FindAllStringSubmatch(named, -1) {
			if !strings.Contains(string(src), "func "+m[1]+"(") {
				t.Errorf("row %q: %s has no test %s", cells[0], path, m[1])
			}
		}
	}
}
