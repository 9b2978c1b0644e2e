package permissions

import (
	"testing"

	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
)

func TestAllows(t *testing.T) {
	g := NewWithT(t)
	g.Expect(Rules{}.Allows("patch", "topology.openstack.org", "topologies")).To(BeTrue(), "not reviewed: asked, not assumed refused")

	// openstack-operator's rule for topologies, and the kube-system grant of config/rbac.
	r := Reviewed([]authorizationv1.ResourceRule{
		{Verbs: []string{"get", "list", "update", "watch"}, APIGroups: []string{"topology.openstack.org"}, Resources: []string{"topologies"}},
		{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"namespaces"}, ResourceNames: []string{"kube-system"}},
		{Verbs: []string{"*"}, APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"*"}},
	})
	g.Expect(r.Known()).To(BeTrue())
	g.Expect(r.Allows("update", "topology.openstack.org", "topologies")).To(BeTrue())
	g.Expect(r.Allows("patch", "topology.openstack.org", "topologies")).To(BeFalse())
	g.Expect(r.Allows("get", "", "namespaces", "kube-system")).To(BeTrue())
	g.Expect(r.Allows("get", "", "namespaces", "openstack")).To(BeFalse(), "another name")
	g.Expect(r.Allows("get", "", "namespaces")).To(BeFalse(), "a grant on names is none on every name")
	g.Expect(r.Allows("delete", "coordination.k8s.io", "leases")).To(BeTrue(), "wildcards")
	g.Expect(r.Allows("get", "", "configmaps")).To(BeFalse())
}
