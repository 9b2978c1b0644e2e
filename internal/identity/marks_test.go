package identity

import (
	"testing"

	. "github.com/onsi/gomega"
)

func TestClassify(t *testing.T) {
	const me = "KeystoneService/openstack/glance/uid-2@cluster-a"
	tests := []struct {
		name, mark    string
		claimUnmarked bool
		want          Ownership
		claim         bool
	}{
		{"marked by this object", me, false, Owned, false},
		{"marked by this object, by an earlier version (no cluster)", "KeystoneService/openstack/glance/uid-2", false, Owned, true},
		{"marked by its predecessor of the same name in this cluster", "KeystoneService/openstack/glance/uid-1@cluster-a", false, Owned, true},
		{"marked by the same name in another cluster sharing Keystone: another region's, joined", "KeystoneService/openstack/glance/uid-9@cluster-b", false, Joined, false},
		{"marked by another name of the namespace in another cluster: joined too", "KeystoneService/openstack/heat/uid-9@cluster-b", false, Joined, false},
		{"marked by another namespace of another cluster", "KeystoneService/tenant/glance/uid-9@cluster-b", false, Foreign, false},
		{"marked by another kind of another cluster", "KeystoneEndpoint/openstack/glance/uid-9@cluster-b", false, Foreign, false},
		{"marked by the same name, cluster unknown (an earlier version)", "KeystoneService/openstack/glance/uid-1", false, Foreign, false},
		{"unmarked, taken over from keystone-operator", "", true, Owned, true},
		{"unmarked, found by name", "", false, Adopted, false},
		{"marked by another namespace's", "KeystoneService/other/glance/uid-3@cluster-a", false, Foreign, false},
		{"marked by another kind", "KeystoneEndpoint/openstack/glance/uid-4@cluster-a", true, Foreign, false},
		{"marked by another name sharing a prefix", "KeystoneService/openstack/glance-2/uid-5@cluster-a", false, Foreign, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got, claim := classify(tt.mark, me, tt.claimUnmarked, false)
			g.Expect(got).To(Equal(tt.want))
			g.Expect(claim).To(Equal(tt.claim))
		})
	}
	g := NewWithT(t)
	g.Expect(classify("KeystoneService/openstack/glance/uid-1", "KeystoneService/openstack/glance/uid-2", false, true)).To(
		Equal(Foreign), "without a cluster identity, no predecessor is claimed")
	ownership, claim := classify("KeystoneService/openstack/glance/uid-1", me, false, true)
	g.Expect([]any{ownership, claim}).To(Equal([]any{Owned, true}),
		"a predecessor's mark of an earlier version, with --claim-unclustered-marks: claimed, the cluster added")
	ownership, _ = classify("KeystoneService/other/glance/uid-1", me, false, true)
	g.Expect(ownership).To(Equal(Foreign), "--claim-unclustered-marks claims the same name only")
	g.Expect(foreign("user", "glance", "KeystoneService/openstack/glance/uid-1", me).Error()).To(ContainSubstring(
		"with an earlier version's mark, which names no cluster (if no other cluster shared this Keystone before the upgrade, " +
			"run the operator with --claim-unclustered-marks"))
	g.Expect(foreign("user", "glance", "KeystoneService/other/glance/uid-1", me).Error()).To(Equal(
		"user glance is registered by KeystoneService/other/glance"), "no hint for another object")
	ownership, claim = classify(me, "KeystoneService/openstack/glance/uid-2", false, false)
	g.Expect([]any{ownership, claim}).To(Equal([]any{Owned, false}),
		"its own mark naming the cluster, read while the cluster's identity is unknown: kept, never rewritten without it")
	g.Expect((&ForeignError{Kind: "user", Name: "glance", Owner: "KeystoneService/other/glance/uid-3"}).Error()).To(
		Equal("user glance is registered by KeystoneService/other/glance"))
	g.Expect((&ForeignError{Kind: "user", Name: "glance", Owner: "KeystoneService/openstack/glance/uid-9@cluster-b"}).Error()).To(
		Equal("user glance is registered by KeystoneService/openstack/glance of the cluster cluster-b"))
}
