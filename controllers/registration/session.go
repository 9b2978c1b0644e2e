package registration

import (
	"context"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/access"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/internal/reconciler"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Base is what every registration controller holds: the API client, the status
// reporter, the clock, the Keystone clients shared between reconciles, how many objects
// reconcile at once, and the cluster's identity.
type Base struct {
	client.Client
	Reporter reconciler.Reporter
	// Clock dates what the registrations record (credentials and their rotation); tests move it.
	Clock clock.PassiveClock
	// Keystone shares authenticated clients between reconciles.
	Keystone *identity.Clients
	// Concurrency is how many objects reconcile at once (Concurrency).
	Concurrency int
	// OrphanGrace is how long Keystone must have been unreachable before an annotated
	// deletion gives up (Orphaning); DefaultOrphanGrace when 0.
	OrphanGrace time.Duration
	// Failures remembers since when each deletion has found Keystone unreachable, what
	// OrphanGrace counts from; made by NewBase.
	Failures *KeystoneFailures
	// ClusterID identifies the cluster in the marks of what it registers in Keystone
	// (identity.OwnerMark): the UID of its kube-system namespace; "" when unknown.
	ClusterID string
	// Reader reads the API server itself, not the cache: where an object the cache may
	// not have seen yet decides what happens in Keystone. The Client when nil.
	Reader client.Reader
}

// Uncached is the Reader, or the Client when there is none.
func (b *Base) Uncached() client.Reader {
	if b.Reader != nil {
		return b.Reader
	}
	return b.Client
}

// Begin starts the session of a round.
func (b *Base) Begin(round *condition.Round) Session {
	grace := b.OrphanGrace
	if grace <= 0 {
		grace = DefaultOrphanGrace
	}
	return Session{Round: round, Clients: b.Keystone, recorder: b.Reporter.Recorder, clock: b.Clock, orphanGrace: grace,
		failures: b.Failures}
}

// Session is what one round of a registration talks to Keystone with: the round it
// marks, the clients shared between reconciles, the namespace's KeystoneAPI once
// usable, and its admin's credentials. Each registration kind's scope embeds it.
type Session struct {
	Round   *condition.Round
	Clients *identity.Clients
	API     *keystonev1.KeystoneAPI
	Admin   identity.Credentials

	// What GiveUp reports with and judges by.
	recorder    record.EventRecorder
	clock       clock.PassiveClock
	orphanGrace time.Duration
	failures    *KeystoneFailures
}

// Open takes api, usable, and its admin's credentials into the session. Without the
// admin's password (its Secret or key missing) it marks step DependencyNotFound and
// returns false: the registration waits for it.
func (s *Session) Open(ctx context.Context, c client.Reader, step lc.Type, api *keystonev1.KeystoneAPI) (bool, error) {
	admin, ok, err := access.Credentials(ctx, c, api)
	if err != nil || !ok {
		if err == nil {
			s.Round.Apply(step, AdminMissingVerdict(api, ""))
		}
		return false, err
	}
	s.API, s.Admin = api, admin
	return true, nil
}

// Password reads the value of key in the Secret name of namespace ns: a service user's
// password. Without it (no Secret, no key, or an empty value) it marks step
// DependencyNotFound and returns a nil Secret; from a Secret a KeystoneAPI writes
// (ControlledSecretRefusal), NotAllowed.
func (s *Session) Password(ctx context.Context, c client.Reader, step lc.Type, ns, name, key string) (*corev1.Secret, error) {
	secret, found, err := access.SecretKey(ctx, c, ns, name, key)
	if err != nil {
		return nil, err
	}
	if !found || len(secret.Data[key]) == 0 {
		s.Round.Apply(step, PasswordMissingVerdict(name, key))
		return nil, nil
	}
	if why := ControlledSecretRefusal("spec.secret", secret); why != "" {
		s.Round.Apply(step, NotAllowedVerdict(why))
		return nil, nil
	}
	return secret, nil
}

// Mark marks a registration step as v says. Where the round wrote to Keystone
// (changed), Keystone's successful answer to the write is what confirms the step: no
// later round reads it back, so a new registration costs only the requests it needs.
// The write is logged.
func (s *Session) Mark(ctx context.Context, step lc.Type, changed bool, v condition.Verdict) {
	s.Round.Apply(step, v)
	if changed {
		ctrl.LoggerFrom(ctx).Info("wrote to Keystone", "step", step, "result", v.Message)
	}
}

// Failed reports a Keystone error on step, answered to the admin (FailedAs).
func (s *Session) Failed(step lc.Type, failed condition.Reason, err error) (ctrl.Result, error) {
	return s.FailedAs(s.Admin, step, failed, err)
}

// FailedAs reports a Keystone error on step, answered to creds (keystoneVerdict): a
// session Keystone no longer honours is dropped, and a refusal is a terminal error, not
// retried until the spec or an input changes.
func (s *Session) FailedAs(creds identity.Credentials, step lc.Type, failed condition.Reason, err error) (ctrl.Result, error) {
	v, suspect := keystoneVerdict(creds.URL, failed, err)
	s.Round.Apply(step, v)
	if suspect {
		s.Clients.Forget(creds)
	}
	if v.Reason == failed {
		return ctrl.Result{}, reconcile.TerminalError(err)
	}
	return ctrl.Result{}, err
}

// PasswordMissingVerdict is a registration step's verdict while the Secret name holds
// no password under key (no Secret, no key, or an empty value): DependencyNotFound
// (Warning), the registration waiting for it.
func PasswordMissingVerdict(name, key string) condition.Verdict {
	return condition.FalseVerdict(condition.DependencyNotFound, "secret %s with key %s not found", name, key)
}

// AdminMissingVerdict is a registration step's verdict while the admin's password of
// api (its Secret or key) is missing: DependencyNotFound (Warning), the registration, or
// what its deletion was doing (doing), waiting for it.
func AdminMissingVerdict(api *keystonev1.KeystoneAPI, doing string) condition.Verdict {
	return missingVerdict(access.Missing(api), doing)
}

// missingVerdict is DependencyNotFound (Warning) for what is missing, prefixed with
// what the step was doing, if anything.
func missingVerdict(missing, doing string) condition.Verdict {
	if doing == "" {
		return condition.FalseVerdict(condition.DependencyNotFound, "%s", missing)
	}
	return condition.FalseVerdict(condition.DependencyNotFound, "%s: %s", doing, missing)
}

// OpenCleanup takes the admin's credentials for removing a registration from api's
// Keystone into the session (access.CleanupCredentials). When a part is gone with no
// copy left (the admin's password, the CA bundle) it marks step DependencyNotFound,
// saying what and what the deletion was doing (doing), and returns it as missing: the
// caller's GiveUp judges it, as Keystone unreachable.
func (s *Session) OpenCleanup(ctx context.Context, c client.Reader, step lc.Type, api *keystonev1.KeystoneAPI, doing string) (missing, err error) {
	admin, gone, err := access.CleanupCredentials(ctx, c, api)
	if err != nil {
		return nil, err
	}
	if gone != "" {
		s.Round.Apply(step, missingVerdict(gone, doing))
		return &identity.CredentialsGoneError{What: gone}, nil
	}
	s.Admin = admin
	return nil, nil
}

// keystoneVerdict is a registration step's verdict on an error from the Keystone at
// url: a 404 that no valid session gets (suspect: authenticate again), an answer that
// may change by itself (none, 429, 5xx) or a stale cached ID are ServiceUnavailable
// (Warning, retried with backoff); any other answer, and a login Keystone refused (now,
// or earlier and not tried again), is the step's failed reason (Error).
func keystoneVerdict(url string, failed condition.Reason, err error) (v condition.Verdict, suspect bool) {
	if refused, ok := identity.LoginRefused(err); ok {
		return condition.FalseVerdict(failed, "%v", refused), false
	}
	switch {
	case identity.SessionSuspect(err):
		return condition.FalseVerdict(condition.ServiceUnavailable, "Keystone at %s: %s to a request that cannot get one; authenticating again",
			url, identity.Message(err)), true
	case identity.Transient(err) || identity.Stale(err):
		return condition.FalseVerdict(condition.ServiceUnavailable, "Keystone at %s: %s", url, identity.Message(err)), false
	}
	return condition.FalseVerdict(failed, "Keystone at %s refused: %s", url, identity.Message(err)), false
}
