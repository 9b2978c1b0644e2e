package condition

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
)

var fuzzSteps = Steps{"S0", "S1", "S2", "S3", "S4"}

// FuzzRound drives random sequences of rounds and marks and checks the invariants
// of the contract after each round.
func FuzzRound(f *testing.F) {
	f.Add([]byte{0, 1, 1, 1, 1, 1, 0, 2, 0, 3, 4, 5, 6})
	f.Add([]byte{1, 5, 5, 5, 5, 5, 9, 4, 4, 1, 2, 3})
	f.Add([]byte{3, 0, 0, 0, 0, 0, 255, 255, 255, 255})
	f.Fuzz(func(t *testing.T, data []byte) {
		next := func() byte {
			if len(data) == 0 {
				return 0
			}
			b := data[0]
			data = data[1:]
			return b
		}
		var saved lc.Conditions
		now := t0
		for round := 0; round < 4 && len(data) > 0; round++ {
			now = now.Add(time.Duration(next()) * time.Second)
			var skip []lc.Type
			skipMask := next()
			for i, s := range fuzzSteps {
				if skipMask&(1<<i) != 0 && skipMask&0x80 != 0 {
					skip = append(skip, s)
				}
			}
			r := fuzzSteps.Begin(saved, now, skip...)
			for _, s := range r.Steps() {
				op := next()
				msg := strings.Repeat("m", int(next())*8)
				switch op % 7 {
				case 1:
					r.MarkTrue(s, "%s", msg)
				case 2:
					r.MarkFalse(s, Created, "%s", msg)
				case 3:
					r.MarkFalse(s, ServiceUnavailable, "%s", msg)
				case 4:
					r.MarkFalse(s, CreationFailed, "%s", msg)
				case 5:
					r.Mirror(s, "Kind", "name", lc.Conditions{*lc.FalseCondition(lc.ReadyCondition, "Other", lc.SeverityWarning, "%s", msg)})
				case 6:
					r.Mirror(s, "Kind", "name", lc.Conditions{*lc.TrueCondition(lc.ReadyCondition, "ok")})
				}
			}
			var err error
			if next()%3 == 0 {
				err = errors.New("transient")
			}
			out := r.Finish(err)
			if msg := checkInvariants(r, saved, out, now); msg != "" {
				t.Fatalf("round %d: %s\nconditions: %+v", round, msg, out.Conditions)
			}
			saved = out.Conditions
		}
	})
}

func checkInvariants(r *Round, saved lc.Conditions, out Outcome, now time.Time) string {
	list := out.Conditions
	if len(list) == 0 || list[0].Type != ReadyCondition {
		return "Ready is not first"
	}
	steps := r.Steps()
	if len(list) < 1+len(steps) {
		return "a step is missing"
	}
	allTrue, stalled := true, false
	for i, s := range steps {
		c := list[1+i]
		if c.Type != s {
			return fmt.Sprintf("position %d holds %s, want %s", 1+i, c.Type, s)
		}
		if c.Status != corev1.ConditionTrue {
			allTrue = false
		}
		if c.Status == corev1.ConditionFalse && c.Severity == lc.SeverityError {
			stalled = true
		}
		if c.Status == corev1.ConditionTrue && c.Severity != lc.SeverityNone {
			return fmt.Sprintf("%s is True with severity %s", s, c.Severity)
		}
	}
	if (list[0].Status == corev1.ConditionTrue) != allTrue {
		return "Ready is not True exactly when every applicable step is True"
	}
	extra := list[1+len(steps):]
	switch {
	case stalled:
		if len(extra) != 1 || extra[0].Type != StalledCondition || !out.Stalled {
			return "a step failed with Error but Stalled is not the last condition"
		}
	case !allTrue:
		if len(extra) != 1 || extra[0].Type != ReconcilingCondition {
			return "progressing without Reconciling last"
		}
	default:
		if len(extra) != 0 {
			return "Ready with extra conditions"
		}
	}
	for _, c := range list {
		if len(c.Message) > MaxMessageLength {
			return fmt.Sprintf("%s has a message of %d bytes", c.Type, len(c.Message))
		}
		prev := saved.Get(c.Type)
		want := now.UTC().Truncate(time.Second)
		if prev != nil && prev.Status == c.Status {
			want = prev.LastTransitionTime.Time
		}
		if !c.LastTransitionTime.Time.Equal(want) {
			return fmt.Sprintf("%s transition time %v, want %v", c.Type, c.LastTransitionTime.Time, want)
		}
	}
	return ""
}
