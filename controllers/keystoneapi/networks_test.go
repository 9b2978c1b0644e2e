package keystoneapi

import (
	"testing"

	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNetworksVerdict(t *testing.T) {
	pod := func(name, status string) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if status != "" {
			p.Annotations = map[string]string{"k8s.v1.cni.cncf.io/network-status": status}
		}
		return p
	}
	on := func(ip string) string {
		return `[{"name":"ovn-kubernetes","ips":["10.0.0.5"]},{"name":"openstack/internalapi","ips":["` + ip + `"]}]`
	}
	tests := []struct {
		name     string
		pods     []corev1.Pod
		want     verdictOf
		attached map[string][]string
	}{
		{"a pod not attached yet", []corev1.Pod{pod("keystone-a", on("172.17.0.31")), pod("keystone-b", "")},
			verdictOf{false, "Requested", lc.SeverityInfo, "pods without an address on internalapi (1 of 2 pods)"},
			map[string][]string{"openstack/internalapi": {"172.17.0.31"}}},
		{"an unreadable annotation", []corev1.Pod{pod("keystone-a", "{")}, verdictOf{false, "ServiceUnavailable", lc.SeverityWarning,
			"pod keystone-a: failed to decode networks status {: unexpected end of JSON input"}, nil},
		{"every pod attached", []corev1.Pod{pod("keystone-b", on("172.17.0.32")), pod("keystone-a", on("172.17.0.31"))},
			verdictOf{true, "", "", "2 pods attached to internalapi"},
			map[string][]string{"openstack/internalapi": {"172.17.0.31", "172.17.0.32"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			v, attached := networksVerdict("openstack", []string{"internalapi"}, tt.pods)
			g.Expect(brief(v)).To(Equal(tt.want))
			g.Expect(attached).To(Equal(tt.attached))
		})
	}
}
