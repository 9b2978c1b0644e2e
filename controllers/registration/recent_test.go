package registration

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

func TestRecent(t *testing.T) {
	g := NewWithT(t)
	r := &Recent{Window: 10 * time.Second}
	t0 := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	g.Expect(r.Matches("a", "in-1", t0)).To(BeFalse(), "nothing recorded")
	r.Record("a", "in-1", t0)
	g.Expect(r.Matches("a", "in-1", t0.Add(9*time.Second))).To(BeTrue())
	g.Expect(r.Matches("a", "in-2", t0.Add(time.Second))).To(BeFalse(), "other inputs")
	g.Expect(r.Matches("b", "in-1", t0.Add(time.Second))).To(BeFalse(), "another object")
	g.Expect(r.Matches("a", "in-1", t0.Add(10*time.Second))).To(BeFalse(), "the window passed")
	r.Forget("a")
	g.Expect(r.Matches("a", "in-1", t0)).To(BeFalse(), "forgotten")

	r.Record("a", "in-1", t0)
	r.Record("b", "in-1", t0.Add(11*time.Second))
	g.Expect(r.seen).To(HaveLen(1), "an expired finding is swept")
}
