package identity_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	. "github.com/onsi/gomega"
)

// TestDecodeListing: a listing's body is read in one pass into its kind's list, whatever
// the order of its members; "truncated": true is said, anything else is not; a body
// without the kind's list, with it twice, or that is not one JSON object, is an error,
// never an empty list (a list that is null is empty, as json.Unmarshal reads it). A
// member fills the field its tag names exactly (another case of the name is another
// member, ignored); a name twice is its last, invalid UTF-8 U+FFFD, as encoding/json
// read them.
func TestDecodeListing(t *testing.T) {
	type svc struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	}
	for _, tc := range []struct {
		name, body string
		want       []svc
		truncated  bool
		err        string
	}{
		{name: "links after", body: `{"services": [{"id": "a", "type": "image", "extra": {"x": [1, 2]}}, {"id": "b", "type": "compute"}], "links": {"next": null, "self": "http://k/v3/services"}}`,
			want: []svc{{"a", "image"}, {"b", "compute"}}},
		{name: "links before, truncated", body: `{"links": {"next": "http://k/v3/services?marker=b"}, "truncated": true, "services": [{"id": "a", "type": "image"}]}`,
			want: []svc{{"a", "image"}}, truncated: true},
		{name: "truncated false", body: `{"truncated": false, "services": []}`, want: []svc{}},
		{name: "null", body: `{"services": null}`},
		{name: "a field's name in another case is another member", body: `{"services": [{"id": "a", "type": "image", "TYPE": "compute", "Id": "b"}]}`,
			want: []svc{{"a", "image"}}},
		{name: "a name twice: the last", body: `{"services": [{"id": "a", "type": "compute", "type": "image"}]}`,
			want: []svc{{"a", "image"}}},
		{name: "invalid UTF-8 as U+FFFD", body: "{\"services\": [{\"id\": \"a\\u00e9\xff\", \"type\": \"image\"}]}",
			want: []svc{{"a\u00e9\ufffd", "image"}}},
		{name: "another kind only", body: `{"users": [{"id": "a"}], "links": {}}`, err: `no "services" in Keystone's answer`},
		{name: "twice", body: `{"services": [{"id": "a", "type": "image"}], "services": [{"id": "b"}]}`,
			err: `"services" twice in Keystone's answer`},
		{name: "a list, not an object", body: `[{"id": "a"}]`, err: "not a JSON object: it starts with ["},
		{name: "cut short", body: `{"services": [{"id": "a", "type": "im`, err: "unexpected EOF"},
		{name: "empty", body: ``, err: "not a JSON object: EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			var got []svc
			truncated, err := identity.DecodeListing(strings.NewReader(tc.body), "services", &got)
			if tc.err != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.err)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tc.want))
			g.Expect(truncated).To(Equal(tc.truncated))
		})
	}
}

// TestMarkReadByItsExactName: the owner mark is the attribute keystone_operator_owner
// alone; one spelled in another case, before or after it, neither overrides it nor
// stands for it (docs/security.md, its mark).
func TestMarkReadByItsExactName(t *testing.T) {
	g := NewWithT(t)
	var got []identity.Service
	_, err := identity.DecodeListing(strings.NewReader(`{"services": [`+
		`{"id": "a", "Keystone_Operator_Owner": "KeystoneService/x/y/z", "keystone_operator_owner": "KeystoneService/ns/a/1"}, `+
		`{"id": "b", "keystone_operator_owner": "KeystoneService/ns/b/2", "KEYSTONE_OPERATOR_OWNER": "KeystoneService/x/y/z"}, `+
		`{"id": "c", "Keystone_operator_owner": "KeystoneService/x/y/z"}]}`), "services", &got)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(HaveLen(3))
	g.Expect([]string{got[0].Owner, got[1].Owner, got[2].Owner}).To(Equal([]string{"KeystoneService/ns/a/1", "KeystoneService/ns/b/2", ""}))
}

// BenchmarkDecodeListing reads a listing of 1000 services, as a new service's round reads
// every service of a Keystone that holds them, with their links and owner marks:
// go test -run '^$' -bench DecodeListing -benchmem ./internal/identity/
func BenchmarkDecodeListing(b *testing.B) {
	var body strings.Builder
	body.WriteString(`{"services": [`)
	for i := range 1000 {
		if i > 0 {
			body.WriteString(", ")
		}
		fmt.Fprintf(&body, `{"id": "%032x", "type": "type-%d", "name": "name-%d", "description": "service %d", "enabled": true, `+
			`"links": {"self": "https://keystone-public.openstack.svc:5000/v3/services/%032x"}, `+
			`"keystone_operator_owner": "KeystoneService/ns-%d/name-%d/%032x"}`, i, i, i, i, i, i%20, i, i)
	}
	body.WriteString(`], "links": {"next": null, "self": "https://keystone-public.openstack.svc:5000/v3/services", "previous": null}}`)
	b.SetBytes(int64(body.Len()))
	for b.Loop() {
		var got []identity.Service
		if _, err := identity.DecodeListing(strings.NewReader(body.String()), "services", &got); err != nil || len(got) != 1000 {
			b.Fatalf("%d services, %v", len(got), err)
		}
	}
}
