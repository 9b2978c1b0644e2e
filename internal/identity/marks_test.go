package identity

import (
	"testing"

	. "github.com/onsi/gomega"
)

// TestClassify: every case of classify, one row each: the owner (this object, with or
// without a known cluster), the mark found on the entity, whether keystone-operator's
// proof lets an unmarked one be claimed (claimUnmarked), whether the operator claims a
// predecessor's mark of an earlier version (--claim-unclustered-marks), and what follows.
func TestClassify(t *testing.T) {
	const (
		me        = "KeystoneService/openstack/glance/uid-2@cluster-a"
		meNoCl    = "KeystoneService/openstack/glance/uid-2"
		otherKind = "KeystoneEndpoint/openstack/glance/uid-4@cluster-a"
	)
	tests := []struct {
		name, owner, mark          string
		claimUnmarked, unclustered bool
		want                       Ownership
		claim                      bool
	}{
		// Its own marks.
		{"marked by this object", me, me, false, false, Owned, false},
		{"marked by this object, by an earlier version (no cluster): the cluster is added", me, meNoCl, false, false, Owned, true},
		{"marked by this object in another cluster (its identity ConfigMap deleted): the object is the same, the mark moves to the new identity",
			me, "KeystoneService/openstack/glance/uid-2@cluster-old", false, false, Owned, true},
		{"marked by this object, read while the cluster's identity is unknown: kept, never rewritten without it", meNoCl, me, false, false, Owned, false},
		{"marked by this object, neither knowing a cluster", meNoCl, meNoCl, false, false, Owned, false},
		// Its predecessors' (same kind, namespace and name, another UID).
		{"marked by its predecessor in this cluster", me, "KeystoneService/openstack/glance/uid-1@cluster-a", false, false, Owned, true},
		{"marked by its predecessor of an earlier version (no cluster)", me, "KeystoneService/openstack/glance/uid-1", false, false, Foreign, false},
		{"marked by its predecessor of an earlier version, with --claim-unclustered-marks", me, "KeystoneService/openstack/glance/uid-1", false, true, Owned, true},
		{"marked by a predecessor while this cluster's identity is unknown", meNoCl, "KeystoneService/openstack/glance/uid-1@cluster-a", false, true, Foreign, false},
		{"marked by a predecessor, neither knowing a cluster, even with --claim-unclustered-marks", meNoCl, "KeystoneService/openstack/glance/uid-1", false, true, Foreign, false},
		// Another cluster's objects of the same namespace: regions.
		{"marked by the same name in another cluster: another region's, joined", me, "KeystoneService/openstack/glance/uid-9@cluster-b", false, false, Joined, false},
		{"marked by another name of the namespace in another cluster: joined too", me, "KeystoneService/openstack/heat/uid-9@cluster-b", false, false, Joined, false},
		{"marked by another cluster while this one's identity is unknown", meNoCl, "KeystoneService/openstack/glance/uid-9@cluster-b", false, false, Foreign, false},
		// Others.
		{"marked by another namespace of another cluster", me, "KeystoneService/tenant/glance/uid-9@cluster-b", false, false, Foreign, false},
		{"marked by another kind of another cluster", me, "KeystoneEndpoint/openstack/glance/uid-9@cluster-b", false, false, Foreign, false},
		{"marked by another namespace's", me, "KeystoneService/other/glance/uid-3@cluster-a", false, false, Foreign, false},
		{"marked by another namespace's of an earlier version, with --claim-unclustered-marks", me, "KeystoneService/other/glance/uid-1", false, true, Foreign, false},
		{"marked by another kind, with keystone-operator's proof", me, otherKind, true, false, Foreign, false},
		{"marked by another name sharing a prefix", me, "KeystoneService/openstack/glance-2/uid-5@cluster-a", false, false, Foreign, false},
		{"marked by something that is no mark", me, "glance", false, false, Foreign, false},
		// Unmarked.
		{"unmarked, with keystone-operator's proof: claimed", me, "", true, false, Owned, true},
		{"unmarked, found by name: adopted", me, "", false, false, Adopted, false},
		{"unmarked, with --claim-unclustered-marks alone: adopted", me, "", false, true, Adopted, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got, claim := classify(tt.mark, tt.owner, tt.claimUnmarked, tt.unclustered)
			g.Expect(got).To(Equal(tt.want))
			g.Expect(claim).To(Equal(tt.claim))
		})
	}
}

// TestForeignError: how a refusal names the owner.
func TestForeignError(t *testing.T) {
	const me = "KeystoneService/openstack/glance/uid-2@cluster-a"
	g := NewWithT(t)
	g.Expect(foreign("user", "glance", "KeystoneService/openstack/glance/uid-1", me).Error()).To(ContainSubstring(
		"with an earlier version's mark, which names no cluster (if no other cluster shared this Keystone before the upgrade, " +
			"run the operator with --claim-unclustered-marks"))
	g.Expect(foreign("user", "glance", "KeystoneService/other/glance/uid-1", me).Error()).To(Equal(
		"user glance is registered by KeystoneService/other/glance"), "no hint for another object")
	g.Expect((&ForeignError{Kind: "user", Name: "glance", Owner: "KeystoneService/other/glance/uid-3"}).Error()).To(
		Equal("user glance is registered by KeystoneService/other/glance"))
	g.Expect((&ForeignError{Kind: "user", Name: "glance", Owner: "KeystoneService/openstack/glance/uid-9@cluster-b"}).Error()).To(
		Equal("user glance is registered by KeystoneService/openstack/glance of the cluster cluster-b"))
}
