package localkeystone

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// warmRounds is how many times every process is asked at once: a process that
// finished its first request early may take a second one of the same round, leaving
// another cold until the next.
const warmRounds = 3

// warmAttempts bounds how often one warming request is sent again after a
// transient answer: a connection refused or reset, a 5xx, or the 403 a process
// answered now and then while it was still loading its policy rules (seen here under
// the load of make test, never from a warm process).
const warmAttempts = 5

// Warm asks Keystone, as the admin, for a project-scoped token and the service list
// with it, Processes() times at once and warmRounds times over. Each uwsgi process
// pays for its first request (the policy rules, its database and memcached
// connections): measured here on 2 cores, 3.1 s for the first token and about 0.8 s
// more for each other process, several times that under load. Paid before Keystone is
// announced, it stays out of what a test or demo measures, as a production
// Keystone's readiness probe keeps it out of a control plane's first requests.
func (k *Keystone) Warm(ctx context.Context, user, password, project string) error {
	for round := range warmRounds {
		errs := make(chan error, Processes())
		for range Processes() {
			go func() { errs <- k.warmOnce(ctx, user, password, project) }()
		}
		var failed error
		for range Processes() {
			if err := <-errs; err != nil && failed == nil {
				failed = err
			}
		}
		if failed != nil {
			return fmt.Errorf("warming Keystone (round %d of %d): %w", round+1, warmRounds, failed)
		}
	}
	return nil
}

// warmOnce sends adminRequests until they succeed, a permanent answer comes, or
// warmAttempts are spent.
func (k *Keystone) warmOnce(ctx context.Context, user, password, project string) error {
	var err error
	for attempt := 1; attempt <= warmAttempts; attempt++ {
		err = k.adminRequests(ctx, user, password, project)
		// A request that timed out on its own (one uwsgi worker stuck on a connection,
		// seen under load over HTTPS) is sent again while the caller still waits.
		stuck := errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil
		if err == nil || (!transient(err) && !stuck) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (after %d attempts; last: %w)", ctx.Err(), attempt, err)
		case <-time.After(time.Duration(attempt) * 500 * time.Millisecond):
		}
	}
	return fmt.Errorf("%d attempts: %w", warmAttempts, err)
}

// statusError is an answer other than the one a request wanted.
type statusError struct {
	method, path string
	status       int
	text, body   string
	want         int
}

func (e *statusError) Error() string {
	return fmt.Sprintf("%s %s: %s, want %d: %s", e.method, e.path, e.text, e.want, e.body)
}

// transient reports whether err may pass when the request is sent again.
func transient(err error) bool {
	var status *statusError
	if errors.As(err, &status) {
		return status.status == http.StatusForbidden || status.status >= http.StatusInternalServerError
	}
	return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// adminRequests gets a token and lists the services with it.
func (k *Keystone) adminRequests(ctx context.Context, user, password, project string) error {
	scope := map[string]any{"project": map[string]any{"name": project, "domain": map[string]string{"id": "default"}}}
	auth := map[string]any{"auth": map[string]any{
		"identity": map[string]any{"methods": []string{"password"}, "password": map[string]any{
			"user": map[string]any{"name": user, "domain": map[string]string{"id": "default"}, "password": password}}},
		"scope": scope,
	}}
	body, err := json.Marshal(auth)
	if err != nil {
		return err
	}
	resp, err := k.request(ctx, http.MethodPost, "/v3/auth/tokens", "", body, http.StatusCreated)
	if err != nil {
		return err
	}
	_, err = k.request(ctx, http.MethodGet, "/v3/services", resp.Header.Get("X-Subject-Token"), nil, http.StatusOK)
	return err
}

// requestTimeout bounds one request: a password check (bcrypt) takes well under a
// second even on a loaded machine; one that hangs is sent again (warmOnce).
const requestTimeout = 20 * time.Second

// request sends one request and fails unless Keystone answers with want.
func (k *Keystone) request(ctx context.Context, method, path, token string, body []byte, want int) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, k.URL()+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("X-Auth-Token", token)
	}
	client, err := k.client()
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != want {
		return nil, &statusError{method: method, path: path, status: resp.StatusCode, text: resp.Status, want: want,
			body: strings.TrimSpace(string(answer[:min(len(answer), 300)]))}
	}
	return resp, nil
}
