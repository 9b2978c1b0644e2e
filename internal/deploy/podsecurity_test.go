package deploy

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	psaapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

// TestPodsMeetRestrictedPodSecurity evaluates every Keystone pod, with TLS and every
// optional mount, against Pod Security's restricted profile with the API server's own
// checks (k8s.io/pod-security-admission): a namespace enforcing it admits them.
func TestPodsMeetRestrictedPodSecurity(t *testing.T) {
	g := NewWithT(t)
	api := tlsAPI()
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks())
	g.Expect(err).NotTo(HaveOccurred())
	restricted := psaapi.LevelVersion{Level: psaapi.LevelRestricted, Version: psaapi.LatestVersion()}
	for name, spec := range keystonePods(api) {
		WithMemcachedMTLS(&spec, "cert-memcached")
		results := evaluator.EvaluatePod(restricted, &metav1.ObjectMeta{Name: name}, &spec)
		for _, r := range results {
			g.Expect(r.Allowed).To(BeTrue(), "%s: %s: %s", name, r.ForbiddenReason, r.ForbiddenDetail)
		}
	}
}
