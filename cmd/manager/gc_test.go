package manager

import (
	"testing"

	. "github.com/onsi/gomega"
)

// TestGCSettings: GOGC and GOMEMLIMIT set by the environment are kept; otherwise the
// manager's target, and a soft limit under the container's memory limit when it has one.
func TestGCSettings(t *testing.T) {
	g := NewWithT(t)
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }
	limited := func() (int64, bool) { return 256 << 20, true }
	unlimited := func() (int64, bool) { return 0, false }

	percent, limit := GCSettings(env(nil), limited)
	g.Expect(percent).To(Equal(DefaultGCPercent))
	g.Expect(limit).To(BeEquivalentTo(214748364), "80% of 256 MiB")
	percent, limit = GCSettings(env(nil), unlimited)
	g.Expect(percent).To(Equal(DefaultGCPercent))
	g.Expect(limit).To(BeZero(), "no container limit, no soft limit")
	percent, limit = GCSettings(env(map[string]string{"GOGC": "100", "GOMEMLIMIT": "100MiB"}), limited)
	g.Expect(percent).To(BeZero(), "the environment's GOGC stays")
	g.Expect(limit).To(BeZero(), "the environment's GOMEMLIMIT stays")

	for in, want := range map[string]int64{"max\n": 0, "268435456\n": 268435456, "9223372036854771712": 0, "": 0, "x": 0} {
		got, ok := parseMemoryLimit(in)
		g.Expect(got).To(Equal(want), in)
		g.Expect(ok).To(Equal(want > 0), in)
	}
}
