package finalizers

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestFor(t *testing.T) {
	long := strings.Repeat("a", 200) + "." + strings.Repeat("b", 52)
	tests := []struct {
		name, kind, object, want string
	}{
		{"short names stay readable", "keystoneservice", "glance", "keystone.openstack.org/keystoneservice-glance"},
		{"exactly at the limit", "ks", strings.Repeat("x", 60), "keystone.openstack.org/ks-" + strings.Repeat("x", 60)},
		{"a 253-character name", "keystoneendpoint", long, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got := For(tt.kind, tt.object)
			if tt.want != "" {
				g.Expect(got).To(Equal(tt.want))
			}
			g.Expect(validation.IsQualifiedName(got)).To(BeEmpty(), got)
		})
	}
	g := NewWithT(t)
	a, b := long, long[:252]+"c"
	g.Expect(For("keystoneendpoint", a)).NotTo(Equal(For("keystoneendpoint", b)), "names differing only at the end")
	for n := 1; n <= 253; n++ {
		g.Expect(validation.IsQualifiedName(For("keystoneapplicationcredential", strings.Repeat("n", n)))).To(BeEmpty(), "length %d", n)
	}
}
