package identity

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"

	"github.com/gophercloud/gophercloud/v2"
)

// StatusCode returns the HTTP status of a Keystone error, 0 when there was no answer
// (timeout, refused connection); 401 for a login Keystone refused (LoginRefused), now or
// earlier.
func StatusCode(err error) int {
	if _, ok := LoginRefused(err); ok {
		return http.StatusUnauthorized
	}
	var e gophercloud.ErrUnexpectedResponseCode
	if errors.As(err, &e) {
		return e.Actual
	}
	return 0
}

// Transient tells whether a Keystone error may go away by itself: no answer, a
// timeout, 429 or a 5xx. Other 4xx answers will not fix themselves.
func Transient(err error) bool {
	code := StatusCode(err)
	return code == 0 || code == http.StatusTooManyRequests || code == http.StatusRequestTimeout || code >= 500
}

// Unreachable tells whether err says that Keystone at keystoneURL could not be reached
// or refused the operator's credentials: a request to it that got no answer (the
// *url.Error of the HTTP client, naming a URL of that host; any host when keystoneURL
// is ""), an answer 5xx, 429 or 408 (busy), 401 or 403 (the credentials; a login
// Keystone refused, remembered or not, included), a suspect
// session; or the credentials to ask with are gone (CredentialsGoneError). Any other
// answer refuses the request itself, and Keystone is there; and an error of anything
// else (the Kubernetes API, this operator's own) says nothing of Keystone.
func Unreachable(err error, keystoneURL string) bool {
	var gone *CredentialsGoneError
	_, refused := LoginRefused(err)
	switch code := StatusCode(err); {
	case errors.As(err, &gone), SessionSuspect(err), refused:
		return true
	case code != 0:
		return code >= 500 || code == http.StatusTooManyRequests || code == http.StatusRequestTimeout ||
			code == http.StatusUnauthorized || code == http.StatusForbidden
	}
	var req *url.Error
	return errors.As(err, &req) && sameHost(req.URL, keystoneURL)
}

// sameHost tells whether the URL a request went to is at the host of keystoneURL (any,
// when keystoneURL is "").
func sameHost(requested, keystoneURL string) bool {
	if keystoneURL == "" {
		return true
	}
	a, errA := url.Parse(requested)
	b, errB := url.Parse(keystoneURL)
	return errA == nil && errB == nil && a.Host == b.Host
}

// CredentialsGoneError says the operator cannot ask Keystone at all: what it asks with
// (the admin's password, the CA bundle) is gone, with no copy left.
type CredentialsGoneError struct{ What string }

func (e *CredentialsGoneError) Error() string { return e.What }

// SessionSuspect tells whether an error is a 404 that escaped the registration code,
// which handles every 404 a valid session can get (an entity deleted meanwhile): Keystone
// answered 404 to a request that cannot legitimately get one, such as a list. Seen on
// the local cluster (make e2e): after Keystone's pods were scaled to zero and back, every
// request of the operator's session got a 404 with an empty body for minutes, while new
// sessions worked; once, in the cluster, even new authentications on the operator's
// pooled connections got it while other clients authenticated. The remedy is a new
// session on new connections (Clients.Forget); the error is retried like a transient one.
func SessionSuspect(err error) bool {
	var refused *RefusedError
	return notFound(err) && !errors.As(err, &refused) && !Stale(err)
}

// StaleError is a 404 to a request naming an ID looked up earlier and cached (a role,
// the service project): it was deleted since. Looking it up again is the remedy.
type StaleError struct{ Err error }

func (e *StaleError) Error() string { return e.Err.Error() }

func (e *StaleError) Unwrap() error { return e.Err }

// Stale tells whether err is a StaleError.
func Stale(err error) bool {
	var stale *StaleError
	return errors.As(err, &stale)
}

// RefusedError marks an answer that refuses the request itself, whatever its code:
// Keystone answers 404 to an application credential naming a role that does not
// exist, which says nothing about the session.
type RefusedError struct{ Err error }

func (e *RefusedError) Error() string { return e.Err.Error() }

func (e *RefusedError) Unwrap() error { return e.Err }

// Message is Keystone's own message for an error answer, or the error text.
func Message(err error) string {
	var e gophercloud.ErrUnexpectedResponseCode
	if errors.As(err, &e) {
		var body struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(e.Body, &body) == nil && body.Error.Message != "" {
			return http.StatusText(e.Actual) + ": " + body.Error.Message
		}
		return http.StatusText(e.Actual)
	}
	return err.Error()
}

func conflict(err error) bool { return gophercloud.ResponseCodeIs(err, http.StatusConflict) }

func notFound(err error) bool { return gophercloud.ResponseCodeIs(err, http.StatusNotFound) }
