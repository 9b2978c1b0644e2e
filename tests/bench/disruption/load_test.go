//go:build bench

package disruption

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The load: rate requests a second, in turns through the public and internal Services,
// each turn of six a token issued, two validated and three GET /v3, half of them on a
// client that keeps connections alive and half on one that opens a new one each time,
// each bounded by timeout.
const (
	rate    = 12
	timeout = 5 * time.Second
	// adminBody logs the sample's admin in (config/samples/osp-secret.yaml).
	adminBody = `{"auth":{"identity":{"methods":["password"],"password":{"user":{"name":"admin","domain":{"name":"Default"},` +
		`"password":"12345678"}}},"scope":{"project":{"name":"admin","domain":{"name":"Default"}}}}}`
)

// failure is a request that failed: when, and how.
type failure struct {
	at   time.Time
	kind string
}

// load sends requests to Keystone through its two Services between start and stop.
type load struct {
	targets     []string
	kept, fresh *http.Client

	mu       sync.Mutex
	token    string
	requests int
	failures []failure
	cancel   context.CancelFunc
	done     chan struct{}
}

// newLoad is the load of the KeystoneAPI keystone of namespace ns, through the cluster
// addresses of its public and internal Services (this machine routes to them as a node).
func newLoad(ctx context.Context, c client.Client, ns string) (*load, error) {
	l := &load{
		kept:  &http.Client{Timeout: timeout},
		fresh: &http.Client{Timeout: timeout, Transport: &http.Transport{DisableKeepAlives: true}},
	}
	api := &keystonev1.KeystoneAPI{}
	api.Name = "keystone"
	for _, iface := range []string{keystonev1.EndpointPublic, keystonev1.EndpointInternal} {
		svc := &corev1.Service{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: deploy.ServiceName(api, iface)}, svc); err != nil {
			return nil, err
		}
		l.targets = append(l.targets, fmt.Sprintf("http://%s:%d", svc.Spec.ClusterIP, deploy.Port))
	}
	if err := l.issue(context.Background(), l.kept, l.targets[0]); err != nil {
		return nil, fmt.Errorf("the first token: %w", err)
	}
	return l, nil
}

// start sends rate requests a second until stop, each in its own goroutine.
func (l *load) start() {
	ctx, cancel := context.WithCancel(context.Background())
	l.mu.Lock()
	l.requests, l.failures, l.cancel, l.done = 0, nil, cancel, make(chan struct{})
	l.mu.Unlock()
	go func() {
		defer close(l.done)
		var wg sync.WaitGroup
		tick := time.NewTicker(time.Second / rate)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				wg.Wait()
				return
			case <-tick.C:
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				l.one(i)
			}()
		}
	}()
}

// stop ends the load once the requests in flight are answered, and returns how many were
// sent and those that failed, in order.
func (l *load) stop() (int, []failure) {
	l.cancel()
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.requests, append([]failure(nil), l.failures...)
}

// one sends the request i of the turn.
func (l *load) one(i int) {
	target := l.targets[i%2]
	httpClient := l.kept
	if (i/2)%2 == 1 {
		httpClient = l.fresh
	}
	ctx := context.Background()
	var err error
	switch i % 6 {
	case 0:
		err = l.issue(ctx, httpClient, target)
	case 1, 2:
		err = l.validate(ctx, httpClient, target)
	default:
		err = l.get(ctx, httpClient, target+"/v3", nil, http.StatusOK)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.requests++
	if err != nil {
		// Which Service and which client: a timeout on kept connections alone is a
		// connection to a pod that went away, on new ones a pod that does not answer.
		how := "kept"
		if httpClient == l.fresh {
			how = "new"
		}
		iface := keystonev1.EndpointPublic
		if i%2 == 1 {
			iface = keystonev1.EndpointInternal
		}
		l.failures = append(l.failures, failure{at: time.Now(), kind: fmt.Sprintf("%s (%s, %s connection)", kindOf(err), iface, how)})
	}
}

// issue logs the admin in and keeps the token for the validations.
func (l *load) issue(ctx context.Context, c *http.Client, target string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target+"/v3/auth/tokens", bytes.NewBufferString(adminBody))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusCreated {
		return statusError(resp.StatusCode)
	}
	l.mu.Lock()
	l.token = resp.Header.Get("X-Subject-Token")
	l.mu.Unlock()
	return nil
}

// validate validates the last token issued, with itself.
func (l *load) validate(ctx context.Context, c *http.Client, target string) error {
	l.mu.Lock()
	token := l.token
	l.mu.Unlock()
	return l.get(ctx, c, target+"/v3/auth/tokens", map[string]string{"X-Auth-Token": token, "X-Subject-Token": token}, http.StatusOK)
}

// get sends GET url with headers and wants status.
func (l *load) get(ctx context.Context, c *http.Client, url string, headers map[string]string, status int) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != status {
		return statusError(resp.StatusCode)
	}
	return nil
}

// statusError is an answer other than the one wanted.
type statusError int

func (e statusError) Error() string { return fmt.Sprintf("HTTP %d", int(e)) }

// kindOf names how a request failed: refused, reset, closed (the connection ended
// before an answer), timeout, or the HTTP status answered.
func kindOf(err error) string {
	var status statusError
	var netErr net.Error
	switch {
	case errors.As(err, &status):
		return status.Error()
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "reset"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), strings.Contains(err.Error(), "server closed"):
		return "closed"
	case errors.As(err, &netErr) && netErr.Timeout():
		return "timeout"
	}
	return "other (" + err.Error() + ")"
}
