package manager

import (
	"testing"

	"github.com/keystone-stepwise/keystone-operator/internal/permissions"
	"github.com/keystone-stepwise/keystone-operator/tests/support/openstackrbac"
	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// asReviewed is what a SelfSubjectRulesReview answers for rules.
func asReviewed(rules []rbacv1.PolicyRule) permissions.Rules {
	out := make([]authorizationv1.ResourceRule, 0, len(rules))
	for _, r := range rules {
		out = append(out, authorizationv1.ResourceRule{Verbs: r.Verbs, APIGroups: r.APIGroups, Resources: r.Resources, ResourceNames: r.ResourceNames})
	}
	return permissions.Reviewed(out)
}

func TestLacking(t *testing.T) {
	g := NewWithT(t)
	needed, err := Needed()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(needed).NotTo(BeEmpty())
	g.Expect(Lacking(needed, asReviewed(needed))).To(BeEmpty(), "config/rbac grants what config/rbac needs")
	g.Expect(Lacking(needed, permissions.Reviewed([]authorizationv1.ResourceRule{{Verbs: []string{"*"}, APIGroups: []string{"*"},
		Resources: []string{"*"}}}))).To(BeEmpty(), "cluster-admin")

	// Run by openstack-operator, with the RBAC it gives keystone-operator: all that is
	// missing is optional, and said at start-up with what the manager does instead.
	lacking := Lacking(needed, asReviewed(openstackrbac.Rules()))
	g.Expect(lacking).To(Equal([]string{"create policy/poddisruptionbudgets", "delete policy/poddisruptionbudgets",
		"get /namespaces", "get policy/poddisruptionbudgets", "list policy/poddisruptionbudgets",
		"patch policy/poddisruptionbudgets", "patch topology.openstack.org/topologies", "update policy/poddisruptionbudgets",
		"use security.openshift.io/securitycontextconstraints", "watch /pods", "watch policy/poddisruptionbudgets"}),
		"openstack-operator's role at %s", openstackrbac.SourceCommit)
	for _, p := range lacking {
		g.Expect(degraded).To(HaveKey(p), "%s is optional", p)
	}

	// A resource name the need does not name is no grant; one it names is.
	kubeSystem := permissions.Reviewed([]authorizationv1.ResourceRule{{Verbs: []string{"get"}, APIGroups: []string{""},
		Resources: []string{"namespaces"}, ResourceNames: []string{"kube-system"}}})
	g.Expect(Lacking([]rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"namespaces"}}}, kubeSystem)).To(
		Equal([]string{"get /namespaces"}))
	g.Expect(Lacking([]rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"namespaces"},
		ResourceNames: []string{"kube-system"}}}, kubeSystem)).To(BeEmpty())
}
