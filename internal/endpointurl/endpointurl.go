package endpointurl

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// MaxLength is the longest endpoint URL Keystone stores (its schema's maxLength).
const MaxLength = 225

// Substitutions are the names Keystone lets an endpoint URL template name
// (keystone.common.utils.WHITELISTED_PROPERTIES, as Debian's Keystone of the tests has it): Keystone fills them in when it
// renders the catalog, %(tenant_id)s and %(project_id)s with the token's project.
var Substitutions = []string{
	"tenant_id", "project_id", "user_id", "public_bind_host", "admin_bind_host",
	"compute_host", "admin_port", "public_port", "public_endpoint",
}

// keystoneScheme is Keystone's schema pattern of a URL (parameter_types.url): a scheme,
// a colon, and something after it.
var keystoneScheme = regexp.MustCompile(`^[a-zA-Z0-9+.-]+:.+`)

// Verdict is what becomes of an endpoint URL.
type Verdict struct {
	// Refused says why Keystone refuses the URL; "" when it takes it.
	Refused string
	// Pending: an http or https URL with no host yet ("http://"), which its service
	// operator writes before its Route has one: waited for, not registered.
	Pending bool
	// Note, for a URL Keystone takes, says what a client may stumble on (not an http or
	// https URL, no host); "" when nothing.
	Note string
}

// Check tells what becomes of raw as an endpoint URL: refused exactly where Keystone
// refuses it (its schema, then check_endpoint_url: the URL with "$(" read as "%(" is
// formatted as a Python %-string with every Substitution set, and any error refuses
// it), pending where it is an http or https URL without a host yet, otherwise taken. A
// template in the host (http://%(compute_host)s:8774) is taken: what comes before the
// first template is checked only as far as it goes.
func Check(raw string) Verdict {
	switch {
	case utf8.RuneCountInString(raw) > MaxLength:
		return Verdict{Refused: fmt.Sprintf("is %d characters long; Keystone stores at most %d", utf8.RuneCountInString(raw), MaxLength)}
	case !keystoneScheme.MatchString(raw):
		return Verdict{Refused: "has no scheme (such as http: or https:) followed by an address"}
	}
	if problem := substitutionProblem(strings.ReplaceAll(raw, "$(", "%(")); problem != "" {
		return Verdict{Refused: problem}
	}
	prefix, templated := beforeTemplate(raw)
	u, err := url.Parse(prefix)
	switch {
	case err != nil:
		// Keystone takes what Go's parser does not, such as a %-escape of its own ("%%20").
		return Verdict{Note: "not a URL Go's parser reads: " + err.Error()}
	case u.Scheme != "http" && u.Scheme != "https":
		return Verdict{Note: fmt.Sprintf("not an http or https URL (scheme %q)", u.Scheme)}
	case hostless(u) && !templated:
		return Verdict{Pending: true}
	case u.Host == "" && u.Opaque != "":
		return Verdict{Note: "no host: write it as " + u.Scheme + "://host/..."}
	}
	return Verdict{}
}

// Hostless tells whether s is an http or https URL without a host yet, such as
// "http://": openstack-operator writes it until its Route has a host.
func Hostless(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && hostless(u)
}

// hostless tells whether u has no host, and nothing in its place ("http:foo" has).
func hostless(u *url.URL) bool { return u.Host == "" && u.Opaque == "" }

// AbsoluteHTTP tells whether s is an absolute http or https URL with a host: what the
// operator itself can reach Keystone at (a KeystoneAPI's endpoint overrides).
func AbsoluteHTTP(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// beforeTemplate is raw up to its first substitution ("%(" or "$("), and whether it has one.
func beforeTemplate(raw string) (string, bool) {
	i := strings.Index(strings.ReplaceAll(raw, "$(", "%("), "%(")
	if i < 0 {
		return raw, false
	}
	return raw[:i], true
}

// substitutionProblem formats s as Python's `s % {name: "" for name in Substitutions}`
// does and says which error it raises; "" when none. Python's rules: "%%" is a percent
// sign; any other "%" starts a conversion (parseConversion), whose key, when it has one,
// must be a Substitution. A conversion without a key takes the mapping itself as its one
// argument: one such, before any keyed one, is allowed.
func substitutionProblem(s string) string {
	keyed, unkeyed := false, 0
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			continue
		}
		if i+1 < len(s) && s[i+1] == '%' {
			i++
			continue
		}
		c, problem := parseConversion(s, i)
		if problem != "" {
			return problem
		}
		switch {
		case c.hasKey && !slices.Contains(Substitutions, c.key):
			return fmt.Sprintf("names %q, which Keystone does not substitute (it knows %s)", c.key, strings.Join(Substitutions, ", "))
		case c.hasKey:
			keyed = true
		case keyed || unkeyed > 0:
			return fmt.Sprintf("has %q at %d, a substitution without a name; name it, as in %%(tenant_id)s", c.text, i)
		default:
			unkeyed++
		}
		i = c.end
	}
	return ""
}

// conversion is one "%..." of a Python %-string.
type conversion struct {
	key    string
	hasKey bool
	// text is the conversion as written; end the index of its last byte.
	text string
	end  int
}

// parseConversion reads the conversion that starts at s[start] ('%'): an optional
// "(key)" (parentheses nest), flags "-+ #0", a width and a ".precision" (digits: "*"
// wants an int), one of "hlL", and a conversion character, which for a string must be
// s, r or a. problem says which error Python raises; "" when none.
func parseConversion(s string, start int) (c conversion, problem string) {
	i := start + 1
	if i < len(s) && s[i] == '(' {
		end := closing(s, i)
		if end < 0 {
			return c, fmt.Sprintf("has a substitution at %d with no closing parenthesis", start)
		}
		c.key, c.hasKey, i = s[i+1:end], true, end+1
	}
	i = skip(s, i, "-+ #0")
	i = skip(s, i, "0123456789*")
	if i < len(s) && s[i] == '.' {
		i = skip(s, i+1, "0123456789*")
	}
	if strings.Contains(s[start:i], "*") {
		return c, fmt.Sprintf("has a '*' width or precision at %d, which Keystone's template cannot fill", start)
	}
	if i < len(s) && strings.IndexByte("hlL", s[i]) >= 0 {
		i++
	}
	if i >= len(s) {
		return c, fmt.Sprintf("ends in an incomplete substitution %q (a literal %% is written %%%%)", s[start:])
	}
	c.text, c.end = s[start:i+1], i
	switch {
	case strings.IndexByte("sra", s[i]) >= 0:
		return c, ""
	case strings.IndexByte("diouxXeEfFgGcu", s[i]) >= 0:
		return c, fmt.Sprintf("has %q at %d, a number format where Keystone substitutes text", c.text, start)
	}
	return c, fmt.Sprintf("has %q at %d, which is no substitution (a literal %% is written %%%%; a template is %%(tenant_id)s)", c.text, start)
}

// closing returns the index of the parenthesis that closes the one at s[open], counting
// the ones opened since as Python does; -1 when there is none.
func closing(s string, open int) int {
	depth := 0
	for j := open; j < len(s); j++ {
		switch s[j] {
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return j
			}
		}
	}
	return -1
}

// skip returns the index of the first byte of s from i on that is not in set.
func skip(s string, i int, set string) int {
	for i < len(s) && strings.IndexByte(set, s[i]) >= 0 {
		i++
	}
	return i
}
