package reconciler

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/tools/record/util"
	"k8s.io/client-go/tools/reference"
)

// MaxPendingEvents is how many Events the operator keeps waiting for the API server at
// most; one more is dropped, counted (keystone_operator_events_dropped_total) and
// logged. Each waits as a queuedEvent, 192 bytes and its message.
const MaxPendingEvents = 20000

// eventSendTries and eventRetryDelay are client-go's: an Event the API server could
// not be reached for is tried again after eventRetryDelay (the first time after a
// random part of it), at most eventSendTries times, and the Events after it wait.
const (
	eventSendTries  = 12
	eventRetryDelay = 10 * time.Second
)

// eventRecorder is the operator's record.EventRecorder: it makes Events as client-go's
// recorder does, and queues them for an eventSender instead of a broadcaster.
type eventRecorder struct {
	scheme *runtime.Scheme
	sender *eventSender
	log    logr.Logger
}

// Event records an Event about obj.
func (r eventRecorder) Event(obj runtime.Object, eventType, reason, message string) {
	r.record(obj, nil, eventType, reason, message)
}

// Eventf records an Event about obj with a formatted message.
func (r eventRecorder) Eventf(obj runtime.Object, eventType, reason, messageFmt string, args ...any) {
	r.record(obj, nil, eventType, reason, fmt.Sprintf(messageFmt, args...))
}

// AnnotatedEventf records an Event about obj with annotations.
func (r eventRecorder) AnnotatedEventf(obj runtime.Object, annotations map[string]string, eventType, reason,
	messageFmt string, args ...any) {
	r.record(obj, annotations, eventType, reason, fmt.Sprintf(messageFmt, args...))
}

func (r eventRecorder) record(obj runtime.Object, annotations map[string]string, eventType, reason, message string) {
	ref, err := reference.GetReference(r.scheme, obj)
	if err != nil {
		r.log.Error(err, "no Event: the object has no reference", "reason", reason, "message", message)
		return
	}
	if eventType != corev1.EventTypeNormal && eventType != corev1.EventTypeWarning {
		r.log.Error(nil, "no Event: its type is neither Normal nor Warning", "type", eventType, "message", message)
		return
	}
	r.sender.add(queuedEvent{ref: *ref, annotations: annotations, eventType: eventType, reason: reason, message: message,
		at: time.Now()})
}

// queuedEvent is what the queue keeps of an Event, a fifth of the Event it makes:
// thousands may wait at scale.
type queuedEvent struct {
	ref                        corev1.ObjectReference
	annotations                map[string]string
	eventType, reason, message string
	at                         time.Time
}

// event is the Event of q from source, as client-go's recorder makes it.
func (q *queuedEvent) event(source corev1.EventSource) *corev1.Event {
	t := metav1.NewTime(q.at)
	namespace := q.ref.Namespace
	if namespace == "" {
		namespace = metav1.NamespaceDefault
	}
	return &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%v.%x", q.ref.Name, t.UnixNano()), Namespace: namespace,
			Annotations: q.annotations},
		InvolvedObject: q.ref, Reason: q.reason, Message: q.message, FirstTimestamp: t, LastTimestamp: t, Count: 1,
		Type: q.eventType, Source: source, ReportingController: source.Component, ReportingInstance: source.Host,
	}
}

// eventSender posts the Events recorded (add), one at a time in the order they were
// recorded, as client-go's own sink does: correlated (EventCorrelation), a repeat
// patched onto the Event it repeats, retried while the API server cannot be reached.
// It differs in the queue: client-go's keeps 1,000 Events waiting and drops the next
// ones without a word, which lost four of the five Events of row 9's registrations
// (docs/benchmarks.md); this one keeps up to limit, and counts and logs what it drops.
type eventSender struct {
	sink       record.EventSink
	source     corev1.EventSource
	correlator *record.EventCorrelator
	limit      int
	retryDelay time.Duration
	log        logr.Logger
	pending    prometheus.Gauge
	dropped    prometheus.Counter

	mu    sync.Mutex
	queue eventFIFO
	// sending is whether an Event taken from the queue is being posted (or waits to be
	// retried): it still counts as pending.
	sending bool
	// stopped is set once the sender is stopped: what is recorded later is dropped.
	stopped bool
	// lastDropLog is when a drop was last logged: at most one line a minute.
	lastDropLog time.Time
	wake        chan struct{}
}

// newEventSender is an eventSender posting to sink; its gauge and counter are
// registered with reg.
func newEventSender(sink record.EventSink, source corev1.EventSource, opts record.CorrelatorOptions, limit int,
	log logr.Logger, reg prometheus.Registerer) (*eventSender, error) {
	s := &eventSender{sink: sink, source: source, correlator: record.NewEventCorrelatorWithOptions(opts), limit: limit,
		retryDelay: eventRetryDelay, log: log, wake: make(chan struct{}, 1),
		pending: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "keystone_operator", Name: "events_pending",
			Help: "Events recorded and not yet posted to the API server."}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "keystone_operator", Name: "events_dropped_total",
			Help: "Events dropped because MaxPendingEvents were already waiting for the API server."}),
	}
	for _, c := range []prometheus.Collector{s.pending, s.dropped} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// add queues e, or drops it when limit Events wait. It never waits for the API server.
func (s *eventSender) add(e queuedEvent) {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return
	}
	if s.queue.n >= s.limit {
		s.dropped.Inc()
		logIt := time.Since(s.lastDropLog) > time.Minute
		if logIt {
			s.lastDropLog = time.Now()
		}
		s.mu.Unlock()
		if logIt {
			s.log.Error(nil, "Event dropped: too many wait for the API server (keystone_operator_events_dropped_total counts them)",
				"pending", s.limit, "object", e.ref.Namespace+"/"+e.ref.Name, "kind", e.ref.Kind, "message", e.message)
		}
		return
	}
	s.queue.push(e)
	s.setPendingLocked()
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// setPendingLocked sets the gauge to the Events waiting and the one being posted. s.mu
// is held.
func (s *eventSender) setPendingLocked() {
	n := s.queue.n
	if s.sending {
		n++
	}
	s.pending.Set(float64(n))
}

// next takes the oldest Event waiting, or waits for one; false once ctx is done, when
// the Events still waiting are given up (and whatever is recorded later), as
// client-go's recorder gives them up when it is shut down.
func (s *eventSender) next(ctx context.Context) (queuedEvent, bool) {
	for {
		s.mu.Lock()
		s.sending = false
		if ctx.Err() != nil {
			s.stopped = true
			s.queue = eventFIFO{}
			s.setPendingLocked()
			s.mu.Unlock()
			return queuedEvent{}, false
		}
		if e, ok := s.queue.pop(); ok {
			s.sending = true
			s.setPendingLocked()
			s.mu.Unlock()
			return e, true
		}
		s.setPendingLocked()
		s.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-s.wake:
		}
	}
}

// run posts the Events as they come until ctx is done.
func (s *eventSender) run(ctx context.Context) {
	for e, ok := s.next(ctx); ok; e, ok = s.next(ctx) {
		s.send(ctx, e.event(s.source))
	}
}

// send posts e after correlating it, as client-go's recordToSink does.
func (s *eventSender) send(ctx context.Context, e *corev1.Event) {
	result, err := s.correlator.EventCorrelate(e)
	if err != nil {
		s.log.Error(err, "correlating an Event")
	}
	if result == nil || result.Skip {
		return
	}
	for tries := 1; !s.post(result.Event, result.Patch); tries++ {
		if tries >= eventSendTries {
			s.log.Error(nil, "Event not written: the API server did not take it after retries", "event", e.Message)
			return
		}
		delay := s.retryDelay
		if tries == 1 {
			delay = time.Duration(rand.Float64() * float64(delay)) //nolint:gosec // spreading retries, not a secret
		}
		select {
		case <-ctx.Done():
			s.log.Info("Event not written: the operator is stopping", "event", e.Message)
			return
		case <-time.After(delay):
		}
	}
}

// post writes e (patch onto the Event it repeats when its Count is above 1), and
// tells whether it is done with it: written, or refused for good.
func (s *eventSender) post(e *corev1.Event, patch []byte) bool {
	var written *corev1.Event
	var err error
	repeat := e.Count > 1
	if repeat {
		written, err = s.sink.Patch(e, patch)
	}
	// The Event repeated may be gone (Events expire).
	if !repeat || util.IsKeyNotFoundError(err) {
		e.ResourceVersion = ""
		written, err = s.sink.Create(e)
	}
	if err == nil {
		s.correlator.UpdateState(written)
		return true
	}
	var construction *restclient.RequestConstructionError
	var status *apierrors.StatusError
	switch {
	case errors.As(err, &construction):
		s.log.Error(err, "Event not written (it cannot be sent)", "event", e.Message)
		return true
	case errors.As(err, &status):
		if !apierrors.IsAlreadyExists(err) && !apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			s.log.Error(err, "Event refused by the API server", "event", e.Message)
		}
		return true
	}
	s.log.Error(err, "Event not written yet: retried", "event", e.Message)
	return false
}

// eventBlockSize is how many Events a block of an eventFIFO holds.
const eventBlockSize = 256

// eventFIFO is a queue of Events in blocks of eventBlockSize: its memory follows what
// waits. A slice, or k8s.io/utils/buffer's Ring, doubles as it grows (up to twice what
// waits, three times while it copies), and the Ring gives memory back only once
// emptied; at row 7's reading about 9,000 Events wait, and its RSS is near its bound.
type eventFIFO struct {
	// blocks hold the Events, oldest first; only the last may be short, and the first
	// is read from head.
	blocks [][]queuedEvent
	head   int
	// n counts the Events waiting.
	n int
}

func (f *eventFIFO) push(e queuedEvent) {
	if len(f.blocks) == 0 || len(f.blocks[len(f.blocks)-1]) == eventBlockSize {
		f.blocks = append(f.blocks, make([]queuedEvent, 0, eventBlockSize))
	}
	last := len(f.blocks) - 1
	f.blocks[last] = append(f.blocks[last], e)
	f.n++
}

// pop takes the oldest Event; false when none waits.
func (f *eventFIFO) pop() (queuedEvent, bool) {
	if f.n == 0 {
		return queuedEvent{}, false
	}
	first := f.blocks[0]
	e := first[f.head]
	first[f.head] = queuedEvent{}
	f.head++
	f.n--
	switch {
	case f.n == 0:
		// Empty: the block is kept for the next Events.
		f.blocks, f.head = f.blocks[:1], 0
		f.blocks[0] = first[:0]
	case f.head == len(first):
		f.blocks[0] = nil
		f.blocks, f.head = f.blocks[1:], 0
	}
	return e, true
}
