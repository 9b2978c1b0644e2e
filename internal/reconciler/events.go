package reconciler

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/go-logr/logr"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
)

// EventComponent is the source of every Event the operator emits.
const EventComponent = "keystone-operator"

// transitionMessage is an Event's message for a condition transition; conditionOf
// reads the condition back from it.
func transitionMessage(t condition.Transition) string {
	return fmt.Sprintf("%s is %s: %s", t.Type, t.Status, t.Message)
}

// conditionOf is the condition an Event of transitionMessage reports, "" for others.
func conditionOf(e *corev1.Event) string {
	if i := strings.Index(e.Message, " is "); i > 0 {
		return e.Message[:i]
	}
	return ""
}

// objectKey is client-go's key of an Event's source and object.
func objectKey(e *corev1.Event) string {
	o := e.InvolvedObject
	return strings.Join([]string{e.Source.Component, e.Source.Host, o.Kind, o.Namespace, o.Name, string(o.UID), o.APIVersion}, "/")
}

// EventCorrelation throttles and combines the operator's Events per condition, where
// client-go's defaults do it per object: one bucket of 25 Events refilled every five
// minutes for all the Events of an object, which a rollout's transitions (about 23 for a
// KeystoneAPI) nearly empty, so that a Warning right after it was dropped. Per
// condition, a flapping step silences only itself, and a Warning of another step is
// always recorded; only one condition's repeated transitions with one reason are
// combined ("combined from similar events"), never the transitions of different steps.
func EventCorrelation() record.CorrelatorOptions {
	return record.CorrelatorOptions{
		SpamKeyFunc: func(e *corev1.Event) string { return objectKey(e) + "/" + conditionOf(e) },
		KeyFunc: func(e *corev1.Event) (string, string) {
			return strings.Join([]string{objectKey(e), conditionOf(e), e.Type, e.Reason}, "/"), e.Message
		},
	}
}

// NewEventRecorder records Events through the API with EventCorrelation, none lost to
// a burst (eventSender); its gauge of the Events waiting and counter of those dropped
// are registered with reg. The returned function stops it.
// Events are sent as Protocol Buffers, as the manager's client sends the other built-in
// kinds: a rollout posts a score of them, and encoding and decoding them as JSON was
// among the manager's larger costs.
func NewEventRecorder(cfg *rest.Config, httpClient *http.Client, scheme *runtime.Scheme, reg prometheus.Registerer,
	log logr.Logger) (record.EventRecorder, func(), error) {
	cfg = rest.CopyConfig(cfg)
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	events, err := typedcorev1.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, nil, fmt.Errorf("creating the Events client: %w", err)
	}
	return startEventRecorder(&typedcorev1.EventSinkImpl{Interface: events.Events("")}, scheme, reg, log, MaxPendingEvents)
}

// startEventRecorder records Events into sink through an eventSender keeping up to
// limit waiting.
func startEventRecorder(sink record.EventSink, scheme *runtime.Scheme, reg prometheus.Registerer, log logr.Logger,
	limit int) (record.EventRecorder, func(), error) {
	source := corev1.EventSource{Component: EventComponent}
	sender, err := newEventSender(sink, source, EventCorrelation(), limit, log, reg)
	if err != nil {
		return nil, nil, fmt.Errorf("registering the Events' metrics: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background()) //nolint:gosec // cancel is the stop returned
	go sender.run(ctx)
	return eventRecorder{scheme: scheme, sender: sender, log: log}, cancel, nil
}
