package reconciler

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
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

// NewEventRecorder records Events through the API with EventCorrelation; the returned
// function stops it.
// Events are sent as Protocol Buffers, as the manager's client sends the other built-in
// kinds: a rollout posts a score of them, and encoding and decoding them as JSON was
// among the manager's larger costs.
func NewEventRecorder(cfg *rest.Config, httpClient *http.Client, scheme *runtime.Scheme) (record.EventRecorder, func(), error) {
	cfg = rest.CopyConfig(cfg)
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	events, err := typedcorev1.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, nil, fmt.Errorf("creating the Events client: %w", err)
	}
	b := record.NewBroadcasterWithCorrelatorOptions(EventCorrelation())
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: events.Events("")})
	return b.NewRecorder(scheme, corev1.EventSource{Component: EventComponent}), b.Shutdown, nil
}
