package reconciler

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
)

// transitionEvent is the Event the Reporter emits for one transition of a KeystoneAPI.
func transitionEvent(conditionType, status, reason, message string) *corev1.Event {
	eventType := corev1.EventTypeNormal
	if reason == "InvalidAnnotation" || reason == "Flapping" {
		eventType = corev1.EventTypeWarning
	}
	now := metav1.NewTime(time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC))
	return &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "keystone.transition", Namespace: "openstack"},
		InvolvedObject: corev1.ObjectReference{Kind: "KeystoneAPI", Namespace: "openstack", Name: "keystone", UID: "u1", APIVersion: "keystone.openstack.org/v1beta1"},
		Source:         corev1.EventSource{Component: EventComponent},
		Type:           eventType, Reason: reason, FirstTimestamp: now, LastTimestamp: now, Count: 1,
		Message: transitionMessage(condition.Transition{Type: lc.Type(conditionType), Status: corev1.ConditionStatus(status), Message: message}),
	}
}

// rollout is the transitions of a KeystoneAPI's rollout: each of 12 steps goes
// False, then True (24 Events, as many as a real one in the functional suite).
func rollout() []*corev1.Event {
	var out []*corev1.Event
	for i := range 12 {
		step := fmt.Sprintf("Step%dReady", i)
		out = append(out, transitionEvent(step, "False", "Requested", "waiting"),
			transitionEvent(step, "True", "Ready", fmt.Sprintf("step %d done", i)))
	}
	return out
}

func correlate(c *record.EventCorrelator, e *corev1.Event) *record.EventCorrelateResult {
	r, err := c.EventCorrelate(e)
	if err != nil {
		panic(err)
	}
	return r
}

func TestEventCorrelationKeepsAWarningAfterARollout(t *testing.T) {
	g := NewWithT(t)
	clk := clocktesting.NewFakeClock(time.Now())
	warning := func() *corev1.Event {
		return transitionEvent("FernetKeysReady", "False", "InvalidAnnotation", "annotation keystone.openstack.org/rotatedat is not a time")
	}

	// client-go's defaults: one bucket per object, which the rollout and one more empty.
	defaults := record.NewEventCorrelatorWithOptions(record.CorrelatorOptions{Clock: clk})
	for _, e := range append(rollout(), transitionEvent("Ready", "True", "Ready", "all steps ready")) {
		correlate(defaults, e)
	}
	g.Expect(correlate(defaults, warning()).Skip).To(BeTrue(), "the defaults drop it: what this option set avoids")

	opts := EventCorrelation()
	opts.Clock = clk
	ours := record.NewEventCorrelatorWithOptions(opts)
	for _, e := range append(rollout(), transitionEvent("Ready", "True", "Ready", "all steps ready")) {
		r := correlate(ours, e)
		g.Expect(r.Skip).To(BeFalse(), e.Message)
		g.Expect(r.Event.Message).To(Equal(e.Message), "transitions of different steps are never combined")
	}
	g.Expect(correlate(ours, warning()).Skip).To(BeFalse(), "a Warning after a rollout is recorded")
}

func TestEventCorrelationThrottlesAFlappingConditionAlone(t *testing.T) {
	g := NewWithT(t)
	opts := EventCorrelation()
	opts.Clock = clocktesting.NewFakeClock(time.Now())
	c := record.NewEventCorrelatorWithOptions(opts)
	var skipped, combined int
	for i := range 60 {
		status, reason := "False", "Flapping"
		if i%2 == 1 {
			status, reason = "True", "Ready"
		}
		r := correlate(c, transitionEvent("DeploymentReady", status, reason, fmt.Sprintf("round %d", i)))
		if r.Skip {
			skipped++
		} else if strings.HasPrefix(r.Event.Message, "(combined from similar events)") {
			combined++
		}
	}
	g.Expect(skipped).To(BeNumerically(">", 0), "a flapping condition is throttled")
	g.Expect(combined).To(BeNumerically(">", 0), "its repeated transitions with one reason are combined")
	r := correlate(c, transitionEvent("FernetKeysReady", "False", "InvalidAnnotation", "not a time"))
	g.Expect(r.Skip).To(BeFalse(), "another condition's Warning is not")
	g.Expect(r.Event.Message).To(HavePrefix("FernetKeysReady is False: "))
}
