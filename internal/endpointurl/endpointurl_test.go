package endpointurl

import (
	"bufio"
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

// Case is one line of testdata/urls.txt: what Keystone does with URL.
type Case struct{ Verdict, URL string }

// cases reads testdata/urls.txt.
func cases(t *testing.T) []Case {
	t.Helper()
	f, err := os.Open("testdata/urls.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var out []Case
	scan := bufio.NewScanner(f)
	for scan.Scan() {
		line := scan.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		verdict, url, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("testdata/urls.txt: %q has no tab", line)
		}
		out = append(out, Case{verdict, url})
	}
	if err := scan.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCheckAgreesWithKeystone(t *testing.T) {
	all := cases(t)
	if len(all) < 30 {
		t.Fatalf("testdata/urls.txt holds %d cases", len(all))
	}
	for _, c := range all {
		v := Check(c.URL)
		got := "taken"
		switch {
		case v.Refused != "":
			got = "refused"
		case v.Pending:
			got = "pending"
		}
		if got != c.Verdict {
			t.Errorf("Check(%q) = %+v (%s), want %s", c.URL, v, got, c.Verdict)
		}
	}
}

func TestCheckSaysWhy(t *testing.T) {
	for url, want := range map[string]string{
		"http://api.example.com/v1/%(tenant)s":       `names "tenant", which Keystone does not substitute`,
		"http://api.example.com/a%20b":               `has "%20b" at 24, which is no substitution`,
		"http://api.example.com/100%":                `ends in an incomplete substitution "%"`,
		"http://api.example.com/v1/%(tenant_id)d":    "a number format where Keystone substitutes text",
		"http://api.example.com/v1/%(tenant_id)s/%s": "a substitution without a name",
		"/v1/%(tenant_id)s":                          "has no scheme",
		"http://api.example.com/v1/%(tenant_id":      "no closing parenthesis",
	} {
		if got := Check(url).Refused; !strings.Contains(got, want) {
			t.Errorf("Check(%q).Refused = %q, want it to say %q", url, got, want)
		}
	}
	for url, want := range map[string]string{
		"ftp://files.example.com/pub":        `not an http or https URL (scheme "ftp")`,
		"http:relative/path":                 "no host",
		"http://api.example.com/100%%":       "not a URL Go's parser reads",
		"glance-internal.openstack.svc:9292": `not an http or https URL (scheme "glance-internal.openstack.svc")`,
		"http://%(compute_host)s:8774/v2":    "",
	} {
		if got := Check(url).Note; !strings.Contains(got, want) || (want == "" && got != "") {
			t.Errorf("Check(%q).Note = %q, want %q", url, got, want)
		}
	}
}

// FuzzCheck: Check never panics, and what it takes Keystone's schema takes too.
func FuzzCheck(f *testing.F) {
	for _, seed := range []string{"http://a/%(tenant_id)s", "%(", "%(()", "http://a/%%(x)s", "x:%-#0 +5.3ls"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if v := Check(s); v.Refused == "" && (utf8.RuneCountInString(s) > MaxLength || !keystoneScheme.MatchString(s)) {
			t.Errorf("Check(%q) takes a URL Keystone's schema refuses", s)
		}
	})
}
