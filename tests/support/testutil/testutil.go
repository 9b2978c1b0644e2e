package testutil

import (
	"bytes"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Writes counts mutating API requests ("METHOD path") passing through Wrap, and
// records the paths watched.
type Writes struct{ m, watched sync.Map }

// Wrap is a rest.Config WrapTransport that counts every request but GET.
func (w *Writes) Wrap(rt http.RoundTripper) http.RoundTripper {
	return RoundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method != http.MethodGet {
			n, _ := w.m.LoadOrStore(req.Method+" "+req.URL.Path, new(atomic.Int64))
			n.(*atomic.Int64).Add(1)
		} else if req.URL.Query().Get("watch") == "true" {
			watched := req.URL.Path
			if selector := req.URL.Query().Get("labelSelector"); selector != "" {
				watched += "?labelSelector=" + selector
			}
			w.watched.Store(watched, true)
		}
		return rt.RoundTrip(req)
	})
}

// Watched tells whether a watch of path (for example /api/v1/pods, every Pod of the
// cluster) was started; with "?labelSelector=<selector>", a watch of what the selector
// selects there.
func (w *Writes) Watched(path string) bool {
	_, ok := w.watched.Load(path)
	return ok
}

// In returns the counts of the requests whose path is in namespace ns.
func (w *Writes) In(ns string) map[string]int64 {
	out := map[string]int64{}
	w.m.Range(func(k, v any) bool {
		if strings.Contains(k.(string), "/namespaces/"+ns+"/") {
			out[k.(string)] = v.(*atomic.Int64).Load()
		}
		return true
	})
	return out
}

// Total sums counts.
func Total(counts map[string]int64) int64 {
	var n int64
	for _, v := range counts {
		n += v
	}
	return n
}

// RoundTripperFunc is a function serving as an http.RoundTripper.
type RoundTripperFunc func(*http.Request) (*http.Response, error)

// RoundTrip calls f.
func (f RoundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// SyncBuffer is a bytes.Buffer safe for concurrent writers (a logger's) and readers.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// ReadyConditions is a Ready condition as lib-common-based operators (mariadb-operator,
// infra-operator) write it, for tests that play those operators.
func ReadyConditions() lc.Conditions {
	c := lc.TrueCondition(lc.ReadyCondition, "Setup complete")
	c.LastTransitionTime = metav1.Now()
	return lc.Conditions{*c}
}

// OffsetClock is the real clock plus an offset that tests advance.
type OffsetClock struct{ offset atomic.Int64 }

// Now is the real time plus the offset.
func (c *OffsetClock) Now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

// Since is Now() - t.
func (c *OffsetClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// Advance moves the clock forward by d.
func (c *OffsetClock) Advance(d time.Duration) { c.offset.Add(int64(d)) }
