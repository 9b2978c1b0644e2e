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
			r := fuzzSteps.Without(skip...).Begin(saved, now)
			for _, s := range r.Steps() {
				fuzzMark(r, s, next(), strings.Repeat("m", int(next())*8))
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

// fuzzMark marks step s of r as op says.
func fuzzMark(r *Round, s lc.Type, op byte, msg string) {
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
		r.Apply(s, Mirror("Kind", Of("name", lc.Conditions{*lc.FalseCondition(lc.ReadyCondition, "Other", lc.SeverityWarning, "%s", msg)})))
	case 6:
		r.Apply(s, Mirror("Kind", Of("name", lc.Conditions{*lc.TrueCondition(lc.ReadyCondition, "ok")})))
	}
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
	for i, s := range steps {
		if list[1+i].Type != s {
			return fmt.Sprintf("position %d holds %s, want %s", 1+i, list[1+i].Type, s)
		}
	}
	if msg := checkSummary(list, len(steps), out.Stalled); msg != "" {
		return msg
	}
	return checkMessagesAndTimes(list, saved, now)
}

// checkSummary checks Ready against the steps and the Stalled or Reconciling tail.
func checkSummary(list lc.Conditions, nSteps int, stalledOut bool) string {
	allTrue, stalled := true, false
	for _, c := range list[1 : 1+nSteps] {
		allTrue = allTrue && c.Status == corev1.ConditionTrue
		stalled = stalled || (c.Status == corev1.ConditionFalse && c.Severity == lc.SeverityError)
		if c.Status == corev1.ConditionTrue && c.Severity != lc.SeverityNone {
			return fmt.Sprintf("%s is True with severity %s", c.Type, c.Severity)
		}
	}
	if (list[0].Status == corev1.ConditionTrue) != allTrue {
		return "Ready is not True exactly when every applicable step is True"
	}
	extra := list[1+nSteps:]
	want := []lc.Type{}
	switch {
	case stalled:
		want = []lc.Type{StalledCondition}
	case !allTrue:
		want = []lc.Type{ReconcilingCondition}
	}
	if len(extra) != len(want) || (len(want) == 1 && extra[0].Type != want[0]) || stalled != stalledOut {
		return fmt.Sprintf("after the steps: %v, want %v", extra, want)
	}
	return ""
}

// checkMessagesAndTimes checks message bounds and that a transition time moves only
// when the status changes.
func checkMessagesAndTimes(list, saved lc.Conditions, now time.Time) string {
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
