// Package registration is what the three controllers that register things in Keystone
// (KeystoneService, KeystoneEndpoint, KeystoneApplicationCredential) share: the session
// a round talks to Keystone with, mirroring the namespace's KeystoneAPI, and reporting
// Keystone's answers as step conditions.
package registration

import (
	"context"
	"fmt"
	"maps"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/access"
	"github.com/keystone-stepwise/keystone-operator/internal/finalizers"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/internal/reconciler"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// ConfirmInterval is how soon what a round wrote to Keystone is read back to confirm
// it: Keystone cannot be watched.
const ConfirmInterval = 200 * time.Millisecond

// DefaultConcurrency is how many objects of each registering kind reconcile at once
// unless the manager says otherwise (--registration-concurrency): registrations wait
// on Keystone and the API server, not on the CPU. Chosen by make bench (BENCHMARKS.md,
// throughput): 1,000 registrations took the same time with 4, 8 and 16, and more at once
// only made their finalizer patches on the shared KeystoneAPI conflict more often.
const DefaultConcurrency = 4

// Concurrency is n, or DefaultConcurrency when n is not positive.
func Concurrency(n int) int {
	if n <= 0 {
		return DefaultConcurrency
	}
	return n
}

// RequeueUnconfirmed asks for a round after ConfirmInterval when this one wrote to
// Keystone (a step marked done, not yet confirmed) and asked for nothing else.
func RequeueUnconfirmed(round *condition.Round, result ctrl.Result) ctrl.Result {
	if result.IsZero() && round.Unconfirmed() {
		result.RequeueAfter = ConfirmInterval
	}
	return result
}

// Release removes finalizers from every KeystoneAPI of the namespace: a registration
// releases wherever it may have put them, so that no KeystoneAPI keeps one of a
// registration that is gone (a second KeystoneAPI, or one created after it).
func Release(ctx context.Context, c client.Client, ns string, names ...string) error {
	list := &keystonev1.KeystoneAPIList{}
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return fmt.Errorf("listing KeystoneAPIs: %w", err)
	}
	for i := range list.Items {
		if err := finalizers.Remove(ctx, c, &list.Items[i], names...); err != nil {
			return err
		}
	}
	return nil
}

// MirrorKeystoneAPI marks step from the namespace's KeystoneAPI (MarkKeystoneAPI) and
// returns it, with usable true once the step is True. api is nil when there is none.
func MirrorKeystoneAPI(ctx context.Context, c client.Reader, round *condition.Round, step lc.Type, ns string) (
	api *keystonev1.KeystoneAPI, usable bool, err error) {
	api, err = access.Lookup(ctx, c, ns)
	if err != nil {
		return nil, false, err
	}
	return api, MarkKeystoneAPI(round, step, ns, api), nil
}

// MarkKeystoneAPI marks step from api, the namespace's KeystoneAPI (nil for none), and
// tells whether it is usable: Ready for its current generation, with an internal
// endpoint, not being deleted. None, or one being deleted, is DependencyNotFound
// (Warning); its own progress is mirrored without its messages (MirrorSteady); Ready
// for an older generation, or without an internal endpoint, is Requested (Info).
func MarkKeystoneAPI(round *condition.Round, step lc.Type, ns string, api *keystonev1.KeystoneAPI) bool {
	switch {
	case api == nil:
		round.MarkFalse(step, condition.DependencyNotFound, "no KeystoneAPI in namespace %s", ns)
		return false
	case !api.DeletionTimestamp.IsZero():
		round.MarkFalse(step, condition.DependencyNotFound, "KeystoneAPI %s is being deleted", api.Name)
		return false
	}
	if round.MirrorSteady(step, "KeystoneAPI", api.Name, api.Status.Conditions); !round.IsTrue(step) {
		return false
	}
	if !api.IsReady() || api.Status.APIEndpoints[keystonev1.EndpointInternal] == "" {
		round.MarkFalse(step, condition.Requested, "KeystoneAPI %s: waiting for its current generation to be ready", api.Name)
		return false
	}
	return true
}

// KeystoneStays tells whether the KeystoneAPI's Keystone outlives a deletion in its
// namespace: it is not being deleted, or it is an external Keystone, which stays
// whatever happens here. Deregistering from a Keystone that goes away is pointless,
// and would hang when its pods are already gone.
func KeystoneStays(api *keystonev1.KeystoneAPI) bool {
	return api.DeletionTimestamp.IsZero() || api.Spec.ExternalKeystoneAPI
}

// Region is where the KeystoneAPI registers endpoints: its status, or its spec where
// the status does not say yet.
func Region(api *keystonev1.KeystoneAPI) string {
	if r := api.GetRegion(); r != "" {
		return r
	}
	return api.Spec.Region
}

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
	// ClusterID identifies the cluster in the marks of what it registers in Keystone
	// (identity.OwnerMark): the UID of its kube-system namespace; "" when unknown.
	ClusterID string
}

// Begin starts the session of a round.
func (b *Base) Begin(round *condition.Round) Session {
	return Session{Round: round, Clients: b.Keystone}
}

// Session is what one round of a registration talks to Keystone with: the round it
// marks, the clients shared between reconciles, the namespace's KeystoneAPI once
// usable, and its admin's credentials. Each registration kind's scope embeds it.
type Session struct {
	Round   *condition.Round
	Clients *identity.Clients
	API     *keystonev1.KeystoneAPI
	Admin   identity.Credentials
}

// Open takes api, usable, and its admin's credentials into the session. Without the
// admin's password (its Secret or key missing) it marks step DependencyNotFound and
// returns false: the registration waits for it.
func (s *Session) Open(ctx context.Context, c client.Reader, step lc.Type, api *keystonev1.KeystoneAPI) (bool, error) {
	admin, ok, err := access.Credentials(ctx, c, api)
	if err != nil || !ok {
		if err == nil {
			s.Round.MarkFalse(step, condition.DependencyNotFound, "%s", access.Missing(api))
		}
		return false, err
	}
	s.API, s.Admin = api, admin
	return true, nil
}

// Password reads the value of key in the Secret name of namespace ns: a service user's
// password. Without it (no Secret, no key, or an empty value) it marks step
// DependencyNotFound and returns a nil Secret.
func (s *Session) Password(ctx context.Context, c client.Reader, step lc.Type, ns, name, key string) (*corev1.Secret, error) {
	secret := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, secret); client.IgnoreNotFound(err) != nil {
		return nil, fmt.Errorf("reading secret %s: %w", name, err)
	} else if err != nil || len(secret.Data[key]) == 0 {
		s.Round.MarkFalse(step, condition.DependencyNotFound, "secret %s with key %s not found", name, key)
		return nil, nil
	}
	return secret, nil
}

// Mark marks a registration step True. Where the round wrote to Keystone (changed),
// Keystone's successful answer to the write is what confirms the step: no later round
// reads it back, so a new registration costs only the requests it needs. The write is
// logged.
func (s *Session) Mark(ctx context.Context, step lc.Type, changed bool, format string, args ...any) {
	s.Round.MarkTrue(step, format, args...)
	if changed {
		ctrl.LoggerFrom(ctx).Info("wrote to Keystone", "step", step, "result", fmt.Sprintf(format, args...))
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

// keystoneVerdict is a registration step's verdict on an error from the Keystone at
// url: a 404 that no valid session gets (suspect: authenticate again), an answer that
// may change by itself (none, 429, 5xx) or a stale cached ID are ServiceUnavailable
// (Warning, retried with backoff); any other answer is the step's failed reason (Error).
func keystoneVerdict(url string, failed condition.Reason, err error) (v condition.Verdict, suspect bool) {
	switch {
	case identity.SessionSuspect(err):
		return condition.FalseVerdict(condition.ServiceUnavailable, "Keystone at %s: %s to a request that cannot get one; authenticating again",
			url, identity.Message(err)), true
	case identity.Transient(err) || identity.Stale(err):
		return condition.FalseVerdict(condition.ServiceUnavailable, "Keystone at %s: %s", url, identity.Message(err)), false
	}
	return condition.FalseVerdict(failed, "Keystone at %s refused: %s", url, identity.Message(err)), false
}

// KeystoneAPIChanged passes the KeystoneAPI updates a registration depends on: Ready
// as MirrorSteady mirrors it (not the messages of its progress), the generation it
// describes, the endpoints, the region, the admin's secret, deletion, OrphanAnnotation. Not, for example,
// the finalizers the registrations themselves add.
var KeystoneAPIChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*keystonev1.KeystoneAPI)
		n, ok2 := e.ObjectNew.(*keystonev1.KeystoneAPI)
		if !ok1 || !ok2 {
			return true
		}
		return condition.SteadyMirrorOf(o.Status.Conditions) != condition.SteadyMirrorOf(n.Status.Conditions) || o.Status.ObservedGeneration != n.Status.ObservedGeneration ||
			!maps.Equal(o.Status.APIEndpoints, n.Status.APIEndpoints) || o.Status.Region != n.Status.Region ||
			o.Spec.Secret != n.Spec.Secret || !o.DeletionTimestamp.Equal(n.DeletionTimestamp) ||
			o.Annotations[OrphanAnnotation] != n.Annotations[OrphanAnnotation]
	},
}
