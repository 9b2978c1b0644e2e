package identity

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/gophercloud/gophercloud/v2"
)

// StatusCode returns the HTTP status of a Keystone error, 0 when there was no answer
// (timeout, refused connection).
func StatusCode(err error) int {
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

// Unreachable tells whether an error says Keystone cannot be reached or refuses the
// operator's credentials: a Transient error (no answer, or the operator's own, such as
// a missing password), a suspect session, 401 or 403. Any other answer refuses the
// request itself, and Keystone is there.
func Unreachable(err error) bool {
	code := StatusCode(err)
	return Transient(err) || SessionSuspect(err) || code == http.StatusUnauthorized || code == http.StatusForbidden
}

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
