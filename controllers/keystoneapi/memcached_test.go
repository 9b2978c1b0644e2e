package keystoneapi

import (
	"testing"

	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	. "github.com/onsi/gomega"
	memcachedv1 "github.com/openstack-k8s-operators/infra-operator/apis/memcached/v1beta1"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestMemcachedVerdict(t *testing.T) {
	mc := func(conds lc.Conditions, servers ...string) *memcachedv1.Memcached {
		return &memcachedv1.Memcached{ObjectMeta: metav1.ObjectMeta{Name: "memcached"},
			Status: memcachedv1.MemcachedStatus{Conditions: conds, ServerList: servers}}
	}
	tests := []struct {
		name string
		mc   *memcachedv1.Memcached
		want verdictOf
	}{
		{"missing", nil, verdictOf{false, "DependencyNotFound", lc.SeverityWarning, "Memcached memcached not found"}},
		{"no status yet", mc(nil), verdictOf{false, "Requested", lc.SeverityInfo, "Memcached memcached: waiting for its status"}},
		{"coming up", mc(notReadyInfo), verdictOf{false, "Requested", lc.SeverityInfo, "Memcached memcached: deploying"}},
		{"failing, as it says", mc(failing), verdictOf{false, "ErrorReason", lc.SeverityError, "Memcached memcached: broken"}},
		{"ready without servers", mc(isReady), verdictOf{false, "Requested", lc.SeverityInfo,
			"Memcached memcached is ready but lists no servers yet"}},
		{"ready", mc(isReady, "a:11211", "b:11211"), verdictOf{true, "", "", "Memcached memcached ready with 2 servers"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(brief(memcachedVerdict("memcached", tt.mc))).To(Equal(tt.want))
		})
	}
}

func TestMemcachedMTLSVerdict(t *testing.T) {
	g := NewWithT(t)
	ready := condition.TrueVerdict("Memcached memcached ready with 1 servers")
	secret := func(data map[string]string) *corev1.Secret {
		s := &corev1.Secret{Data: map[string][]byte{}}
		for k, v := range data {
			s.Data[k] = []byte(v)
		}
		return s
	}
	g.Expect(brief(memcachedMTLSVerdict(ready, "memcached", "cert-mtls", nil))).To(Equal(verdictOf{false, "DependencyNotFound",
		lc.SeverityWarning, "Memcached memcached asks for client certificates: secret cert-mtls not found"}))
	g.Expect(brief(memcachedMTLSVerdict(ready, "memcached", "cert-mtls", secret(map[string]string{"tls.crt": "c", "ca.crt": "a"})))).To(
		Equal(verdictOf{false, "DependencyNotFound", lc.SeverityWarning,
			"Memcached memcached asks for client certificates: secret cert-mtls has no key tls.key"}))
	g.Expect(brief(memcachedMTLSVerdict(ready, "memcached", "cert-mtls", secret(map[string]string{"tls.crt": "c", "tls.key": "k", "ca.crt": "a"})))).To(
		Equal(verdictOf{true, "", "", "Memcached memcached ready with 1 servers, client certificate from secret cert-mtls"}))
}
