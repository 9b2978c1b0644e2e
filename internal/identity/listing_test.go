package identity_test

import (
	"strings"
	"testing"

	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	. "github.com/onsi/gomega"
)

// TestDecodeListing: a listing's body is read in one pass into its kind's list, whatever
// the order of its members; "truncated": true is said, anything else is not; a body
// without the kind's list, with it twice, or that is not one JSON object, is an error,
// never an empty list (a list that is null is empty, as json.Unmarshal reads it).
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
