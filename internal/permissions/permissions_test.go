package permissions

import (
	"testing"

	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
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

// TestAllowsOn: the answer for an object's kind, remembered per Go type, but not for
// the types every kind shares (Unstructured, PartialObjectMetadata).
func TestAllowsOn(t *testing.T) {
	g := NewWithT(t)
	mapper := meta.NewDefaultRESTMapper(nil)
	for _, kind := range []string{"Secret", "ConfigMap"} {
		mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: kind}, meta.RESTScopeNamespace)
	}
	c := Client{Client: fake.NewClientBuilder().WithRESTMapper(mapper).Build(), Rules: Reviewed([]authorizationv1.ResourceRule{
		{Verbs: []string{"list"}, APIGroups: []string{""}, Resources: []string{"secrets"}},
	})}
	g.Expect(c.AllowsOn("list", &corev1.Secret{})).To(BeTrue())
	g.Expect(c.AllowsOn("list", &corev1.Secret{})).To(BeTrue(), "remembered")
	g.Expect(c.AllowsOn("list", &corev1.ConfigMap{})).To(BeFalse())
	g.Expect(c.AllowsOn("delete", &corev1.Secret{})).To(BeFalse(), "per verb")
	meta := func(kind string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: kind}}
	}
	g.Expect(c.AllowsOn("list", meta("Secret"))).To(BeTrue())
	g.Expect(c.AllowsOn("list", meta("ConfigMap"))).To(BeFalse(), "metadata of another kind: not the answer for Secret")
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "Secret"})
	g.Expect(c.AllowsOn("list", u)).To(BeTrue())
	u.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"})
	g.Expect(c.AllowsOn("list", u)).To(BeFalse(), "unstructured of another kind")
	g.Expect(Client{Client: c.Client}.AllowsOn("delete", &corev1.Secret{})).To(BeTrue(), "rules not reviewed allow everything")
}
