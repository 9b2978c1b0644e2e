package identity

import (
	"testing"

	. "github.com/onsi/gomega"
)

func TestClassify(t *testing.T) {
	const me = "KeystoneService/openstack/glance/uid-2"
	tests := []struct {
		name, mark    string
		claimUnmarked bool
		want          Ownership
		claim         bool
	}{
		{"marked by this object", me, false, Owned, false},
		{"marked by its predecessor of the same name", "KeystoneService/openstack/glance/uid-1", false, Owned, true},
		{"unmarked, taken over from keystone-operator", "", true, Owned, true},
		{"unmarked, found by name", "", false, Adopted, false},
		{"marked by another namespace's", "KeystoneService/other/glance/uid-3", false, Foreign, false},
		{"marked by another kind", "KeystoneEndpoint/openstack/glance/uid-4", true, Foreign, false},
		{"marked by another name sharing a prefix", "KeystoneService/openstack/glance-2/uid-5", false, Foreign, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got, claim := classify(tt.mark, me, tt.claimUnmarked)
			g.Expect(got).To(Equal(tt.want))
			g.Expect(claim).To(Equal(tt.claim))
		})
	}
	g := NewWithT(t)
	g.Expect((&ForeignError{Kind: "user", Name: "glance", Owner: "KeystoneService/other/glance/uid-3"}).Error()).To(
		Equal("user glance is registered by KeystoneService/other/glance"))
}
