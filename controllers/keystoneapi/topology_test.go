package keystoneapi

import (
	"testing"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	. "github.com/onsi/gomega"
	topologyv1 "github.com/openstack-k8s-operators/infra-operator/apis/topology/v1beta1"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTopologyVerdict(t *testing.T) {
	api := func(namespace string) *keystonev1.KeystoneAPI {
		return &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Namespace: "openstack"},
			Spec: keystonev1.KeystoneAPISpec{TopologyRef: &keystonev1.TopoRef{Name: "zones", Namespace: namespace}}}
	}
	spread := []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "zone"}}
	topology := &topologyv1.Topology{ObjectMeta: metav1.ObjectMeta{Name: "zones"},
		Spec: topologyv1.TopologySpec{TopologySpreadConstraints: &spread}}
	tests := []struct {
		name     string
		api      *keystonev1.KeystoneAPI
		topology *topologyv1.Topology
		want     verdictOf
	}{
		{"in another namespace", api("other"), topology, verdictOf{false, "InvalidInput", lc.SeverityError,
			"topologyRef.namespace other: the Topology must be in the KeystoneAPI's namespace openstack"}},
		{"missing", api(""), nil, verdictOf{false, "DependencyNotFound", lc.SeverityWarning, "topology zones not found"}},
		{"found", api("openstack"), topology, verdictOf{true, "", "", "topology zones: 1 spread constraints, affinity false"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(brief(topologyVerdict(tt.api, tt.topology))).To(Equal(tt.want))
		})
	}
}
