package reconciler

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
)

// fakeSink is an EventSink that holds every write until open is closed, and fails
// the writes failures lists, by message, once each.
type fakeSink struct {
	open     chan struct{}
	mu       sync.Mutex
	failures map[string]error
	created  []string // the messages, in the order written
	patched  []string
	onCreate func(*corev1.Event)
}

func newFakeSink() *fakeSink {
	return &fakeSink{open: make(chan struct{}), failures: map[string]error{}}
}

func (f *fakeSink) write(e *corev1.Event, into *[]string) (*corev1.Event, error) {
	<-f.open
	f.mu.Lock()
	defer f.mu.Unlock()
	if err, ok := f.failures[e.Message]; ok {
		delete(f.failures, e.Message)
		return nil, err
	}
	*into = append(*into, e.Message)
	out := e.DeepCopy()
	out.ResourceVersion = fmt.Sprint(len(f.created) + len(f.patched))
	return out, nil
}

func (f *fakeSink) Create(e *corev1.Event) (*corev1.Event, error) {
	if f.onCreate != nil {
		f.onCreate(e)
	}
	return f.write(e, &f.created)
}
func (f *fakeSink) Update(e *corev1.Event) (*corev1.Event, error) { return f.write(e, &f.created) }
func (f *fakeSink) Patch(e *corev1.Event, _ []byte) (*corev1.Event, error) {
	return f.write(e, &f.patched)
}

func (f *fakeSink) messages() (created, patched []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.created...), append([]string(nil), f.patched...)
}

// eventOn is an Event about ConfigMap name, as the recorder queues it.
func eventOn(name, message string) queuedEvent {
	return queuedEvent{ref: corev1.ObjectReference{Kind: "ConfigMap", Namespace: "ns", Name: name, UID: types.UID("u-" + name),
		APIVersion: "v1"}, eventType: corev1.EventTypeNormal, reason: "Ready", message: message, at: time.Now()}
}

// A burst of Events far above client-go's 1,000 while the API server is slow: every
// one is posted, in the order recorded, as client-go's recorder makes it. client-go's
// own sink posted 1,001 of these 3,000 and dropped the rest without a word.
func TestEventRecorderKeepsABurst(t *testing.T) {
	g := NewWithT(t)
	sink := newFakeSink()
	reg := prometheus.NewRegistry()
	recorder, stop, err := startEventRecorder(sink, clientgoscheme.Scheme, reg, logr.Discard(), MaxPendingEvents)
	g.Expect(err).NotTo(HaveOccurred())
	defer stop()
	pending := func() float64 { return metricValue(g, reg, "keystone_operator_events_pending") }

	const batches, perBatch = 6, 500
	var want []string
	for b := range batches {
		for i := range perBatch {
			n := b*perBatch + i
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm%d", n), Namespace: "ns", UID: "u"}}
			msg := fmt.Sprintf("InputReady is True: %d", n)
			recorder.Event(cm, corev1.EventTypeNormal, "Ready", msg)
			want = append(want, msg)
		}
		// Queued, or held by the closed sink: pending until posted.
		g.Eventually(pending).Should(Equal(float64(len(want))))
	}
	close(sink.open)
	g.Eventually(func() int { c, _ := sink.messages(); return len(c) }).WithTimeout(30 * time.Second).Should(Equal(len(want)))
	created, _ := sink.messages()
	g.Expect(created).To(Equal(want))
	g.Expect(pending()).To(BeZero())
	g.Expect(metricValue(g, reg, "keystone_operator_events_dropped_total")).To(BeZero())
}

// Past the limit, an Event is dropped and counted; those queued are all posted.
func TestEventSenderCountsWhatItDrops(t *testing.T) {
	g := NewWithT(t)
	sink := newFakeSink()
	s, reg := testSender(g, sink)
	addEvents(s, 30)
	g.Expect(metricValue(g, reg, "keystone_operator_events_dropped_total")).To(Equal(20.0))
	g.Expect(metricValue(g, reg, "keystone_operator_events_pending")).To(Equal(10.0))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.run(ctx)
	close(sink.open)
	g.Eventually(func() int { c, _ := sink.messages(); return len(c) }).Should(Equal(10))
	created, _ := sink.messages()
	g.Expect(created[0]).To(Equal("event 0"))
	g.Expect(created[9]).To(Equal("event 9"))
}

// An Event the API server could not be reached for is tried again, and the ones
// after it wait for it; one the API server refuses is given up, and the next goes on.
// A repeat of an Event is a patch of it.
func TestEventSenderRetriesUnreachableAndSkipsRefused(t *testing.T) {
	g := NewWithT(t)
	sink := newFakeSink()
	close(sink.open)
	sink.failures["unreachable"] = errors.New("connection refused")
	sink.failures["refused"] = apierrors.NewInvalid(schema.GroupKind{Kind: "Event"}, "x", nil)
	s, _ := testSender(g, sink)
	s.retryDelay = 10 * time.Millisecond
	s.add(eventOn("a", "unreachable"))
	s.add(eventOn("b", "refused"))
	s.add(eventOn("c", "after"))
	s.add(eventOn("c", "after"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.run(ctx)
	g.Eventually(func() []string { _, p := sink.messages(); return p }).Should(Equal([]string{"after"}))
	created, _ := sink.messages()
	g.Expect(created).To(Equal([]string{"unreachable", "after"}))
}

// testSender is an eventSender to sink that keeps 10 Events waiting, not started, and
// the registry of its metrics.
func testSender(g Gomega, sink *fakeSink) (*eventSender, *prometheus.Registry) {
	reg := prometheus.NewRegistry()
	s, err := newEventSender(sink, corev1.EventSource{Component: EventComponent}, EventCorrelation(), 10, logr.Discard(), reg)
	g.Expect(err).NotTo(HaveOccurred())
	return s, reg
}

// addEvents queues n Events, "event 0" to "event <n-1>", each about a ConfigMap of its own.
func addEvents(s *eventSender, n int) {
	for i := range n {
		s.add(eventOn(fmt.Sprintf("cm%d", i), fmt.Sprintf("event %d", i)))
	}
}

// metricValue is the value of reg's gauge or counter name, without labels.
func metricValue(g Gomega, reg *prometheus.Registry, name string) float64 {
	families, err := reg.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	for _, f := range families {
		if f.GetName() == name {
			m := f.GetMetric()[0]
			return m.GetGauge().GetValue() + m.GetCounter().GetValue()
		}
	}
	g.Expect(name).To(BeEmpty(), "no such metric")
	return 0
}

// The Event posted is the one client-go's recorder makes (but for its time).
func TestEventMadeAsClientGoMakesIt(t *testing.T) {
	g := NewWithT(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "ns", UID: "u", ResourceVersion: "7"}}
	b := record.NewBroadcaster()
	defer b.Shutdown()
	theirs := make(chan *corev1.Event, 1)
	b.StartEventWatcher(func(e *corev1.Event) { theirs <- e })
	b.NewRecorder(clientgoscheme.Scheme, corev1.EventSource{Component: EventComponent}).
		AnnotatedEventf(cm, map[string]string{"a": "b"}, corev1.EventTypeWarning, "Failed", "step %d", 3)

	sink := newFakeSink()
	close(sink.open)
	var ours *corev1.Event
	sink.onCreate = func(e *corev1.Event) { ours = e.DeepCopy() }
	recorder, stop, err := startEventRecorder(sink, clientgoscheme.Scheme, prometheus.NewRegistry(), logr.Discard(), 10)
	g.Expect(err).NotTo(HaveOccurred())
	defer stop()
	recorder.AnnotatedEventf(cm, map[string]string{"a": "b"}, corev1.EventTypeWarning, "Failed", "step %d", 3)
	g.Eventually(func() []string { c, _ := sink.messages(); return c }).Should(HaveLen(1))

	want := <-theirs
	g.Expect(ours.Name).To(HavePrefix("cm."))
	for _, e := range []*corev1.Event{want, ours} {
		e.Name, e.FirstTimestamp, e.LastTimestamp = "", metav1.Time{}, metav1.Time{}
	}
	g.Expect(ours).To(Equal(want))
}

// The queue gives Events back in order, and holds no more blocks than what waits needs.
func TestEventFIFO(t *testing.T) {
	g := NewWithT(t)
	var f eventFIFO
	pushed, popped := 0, 0
	for round := range 40 {
		for range 97 + round {
			f.push(queuedEvent{message: fmt.Sprint(pushed)})
			pushed++
		}
		for range 60 {
			e, ok := f.pop()
			g.Expect(ok).To(BeTrue())
			g.Expect(e.message).To(Equal(fmt.Sprint(popped)))
			popped++
		}
		g.Expect(f.n).To(Equal(pushed - popped))
		g.Expect(len(f.blocks)).To(BeNumerically("<=", f.n/eventBlockSize+2))
	}
	for f.n > 0 {
		e, _ := f.pop()
		g.Expect(e.message).To(Equal(fmt.Sprint(popped)))
		popped++
	}
	_, ok := f.pop()
	g.Expect(ok).To(BeFalse())
	g.Expect(f.blocks).To(HaveLen(1), "the emptied block is kept for the next Events")
	f.push(queuedEvent{message: "again"})
	e, ok := f.pop()
	g.Expect(ok).To(BeTrue())
	g.Expect(e.message).To(Equal("again"))
}

// Stopped, the sender posts the Event it holds and gives up the others, and what is
// recorded later, as client-go's recorder does once shut down.
func TestEventSenderStops(t *testing.T) {
	g := NewWithT(t)
	sink := newFakeSink()
	s, reg := testSender(g, sink)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.run(ctx); close(done) }()
	addEvents(s, 5)
	g.Eventually(func() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.sending }).Should(BeTrue())
	cancel()
	close(sink.open)
	g.Eventually(done).Should(BeClosed())
	s.add(eventOn("late", "late"))
	created, _ := sink.messages()
	g.Expect(created).To(Equal([]string{"event 0"}))
	g.Expect(metricValue(g, reg, "keystone_operator_events_pending")).To(BeZero())
}
