package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// TestDocLinks: every relative link of the README and docs/ to a Markdown page reaches
// a page that exists, and its #anchor a heading of that page (GitHub's anchor of it), so
// that moving a section does not leave a reader at the top of the wrong page.
func TestDocLinks(t *testing.T) {
	root := repoRoot(t)
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	link := regexp.MustCompile(`\]\(([^)#\s]*\.md)?(#[^)\s]+)?\)`)
	checked := 0
	for _, path := range append(pages, filepath.Join(root, "README.md")) {
		rel, _ := filepath.Rel(root, path)
		text := readAll(t, root, rel)
		for _, m := range link.FindAllStringSubmatchIndex(text, -1) {
			if m[2] < 0 && m[4] < 0 {
				continue
			}
			line := strings.Count(text[:m[0]], "\n") + 1
			target := path
			if m[2] >= 0 {
				target = filepath.Join(filepath.Dir(path), text[m[2]:m[3]])
			}
			data, err := os.ReadFile(target)
			if err != nil {
				t.Errorf("%s:%d links to %s, which does not exist", rel, line, text[m[0]:m[1]])
				continue
			}
			checked++
			if m[4] < 0 {
				continue
			}
			anchor := text[m[4]+1 : m[5]]
			if !headingAnchors(string(data))[anchor] {
				targetRel, _ := filepath.Rel(root, target)
				t.Errorf("%s:%d links to #%s, which is no heading of %s", rel, line, anchor, targetRel)
			}
		}
	}
	if checked < 20 {
		t.Fatalf("checked %d links only: the search is broken", checked)
	}
}

// headingAnchors are the anchors GitHub gives the headings of a Markdown page: lower
// case, punctuation dropped, spaces made hyphens (code blocks aside).
func headingAnchors(page string) map[string]bool {
	anchors := map[string]bool{}
	fenced := false
	for _, line := range strings.Split(page, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		anchors[b.String()] = true
	}
	return anchors
}
