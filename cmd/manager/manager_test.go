package manager

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
)

func TestRateLimited(t *testing.T) {
	g := NewWithT(t)
	base := &rest.Config{Host: "https://example", QPS: 1000, Burst: 2000}
	got := RateLimited(base, Options{})
	g.Expect(got.QPS).To(BeEquivalentTo(1000), "the config's own limits stand when no option is set")
	g.Expect(got.Burst).To(Equal(2000))
	got = RateLimited(base, Options{KubeQPS: 50, KubeBurst: 80})
	g.Expect(got.QPS).To(BeEquivalentTo(50))
	g.Expect(got.Burst).To(Equal(80))
	g.Expect(base.QPS).To(BeEquivalentTo(1000), "the caller's config is not changed")
	got = RateLimited(&rest.Config{Host: "https://example"}, Options{})
	g.Expect(got.QPS).To(BeEquivalentTo(DefaultKubeQPS), "client-go's 5 per second would hold a thousand registrations back")
	g.Expect(got.Burst).To(Equal(DefaultKubeBurst))
}
