package keystoneapi

import (
	"context"
	"fmt"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/reconciler"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// registrationKinds are the registration kinds, as they depend on each other (the
// rank of condition.Member): each holds a KeystoneAPI with a finalizer named after it
// (finalizers.For, finalizers.Upstream); list is a prototype of its list.
var registrationKinds = []struct {
	finalizer, name string
	list            client.ObjectList
}{
	{"keystoneservice", "KeystoneService", &keystonev1.KeystoneServiceList{}},
	{"keystoneendpoint", "KeystoneEndpoint", &keystonev1.KeystoneEndpointList{}},
	{"keystoneapplicationcredential", "KeystoneApplicationCredential", &keystonev1.KeystoneApplicationCredentialList{}},
}

// RegistrationsViewInterval is how often at most the registrations' changes wake a
// KeystoneAPI's view: a change is seen at once, and the changes of a burst (a control
// plane's registrations created at once) in one round per interval (BENCHMARKS.md, the
// consolidated view).
const RegistrationsViewInterval = 5 * time.Second

// registrationsView wakes the namespace's KeystoneAPIs for a registration's change, at
// most once per RegistrationsViewInterval: each call has a throttle of its own, so the
// registration kinds share one handler.
func (r *Reconciler) registrationsView() handler.EventHandler {
	return reconciler.Throttled(reconciler.EnqueueInNamespace(r.Client, &keystonev1.KeystoneAPIList{}, nil), RegistrationsViewInterval)
}

// registrationReadyChanged passes what changes the consolidated view: a registration
// created or gone, and its Ready as Mirror with Steady sees it (status, reason, severity, and
// the message of a Warning or Error), not the progress of its every round.
var registrationReadyChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(condition.Source)
		n, ok2 := e.ObjectNew.(condition.Source)
		return !ok1 || !ok2 || condition.MirrorKey(o, condition.Steady()) != condition.MirrorKey(n, condition.Steady())
	},
	GenericFunc: func(event.GenericEvent) bool { return false },
}

// reconcileRegistrations reports RegistrationsReady and status.registrations from the
// namespace's registrations, read from the cache. It is not a step: it runs every round
// that was not halted, and what it reports never gates Ready.
func (r *Reconciler) reconcileRegistrations(ctx context.Context, s *scope) (ctrl.Result, error) {
	var all []condition.Member
	for rank, k := range registrationKinds {
		list := k.list.DeepCopyObject().(client.ObjectList)
		// Read, never changed: the cache's objects themselves, not copies of a namespace's hundreds.
		if err := r.List(ctx, list, client.InNamespace(s.api.Namespace), client.UnsafeDisableDeepCopy); err != nil {
			return ctrl.Result{}, fmt.Errorf("listing the namespace's registrations: %w", err)
		}
		if err := apimeta.EachListItem(list, func(o runtime.Object) error {
			all = append(all, condition.Member{Kind: k.name, Rank: rank, Object: o.(condition.Source)})
			return nil
		}); err != nil {
			return ctrl.Result{}, err
		}
	}
	counts, v := registrationsVerdict(all)
	s.api.Status.Registrations = &counts
	s.round.Report(keystonev1.KeystoneAPIRegistrationsReady, v)
	return ctrl.Result{}, nil
}

// registrationsVerdict is the consolidated view of a namespace's registrations: how
// many of each kind exist and are Ready, and RegistrationsReady: True when every one is
// Ready (or there is none); else False for the most severe registration that is not
// (condition.Aggregate: Error, then Warning, then by kind and name), with its Ready
// reason, severity and message; while none fails, Requested (Info) naming how many are
// not ready yet.
func registrationsVerdict(regs []condition.Member) (keystonev1.KeystoneAPIRegistrations, condition.Verdict) {
	var counts keystonev1.KeystoneAPIRegistrations
	countOf := map[string]*keystonev1.RegistrationCount{"KeystoneService": &counts.KeystoneServices,
		"KeystoneEndpoint": &counts.KeystoneEndpoints, "KeystoneApplicationCredential": &counts.KeystoneApplicationCredentials}
	for _, reg := range regs {
		count := countOf[reg.Kind]
		count.Total++
		if reg.Ready() {
			count.Ready++
		}
	}
	notReady, worst, ready := condition.Aggregate(regs)
	switch {
	case len(regs) == 0:
		return counts, condition.TrueVerdict("no KeystoneService, KeystoneEndpoint or KeystoneApplicationCredential in the namespace")
	case worst == nil:
		return counts, condition.TrueVerdict("all %d registrations ready (KeystoneServices: %d, KeystoneEndpoints: %d, "+
			"KeystoneApplicationCredentials: %d)", len(regs), counts.KeystoneServices.Total, counts.KeystoneEndpoints.Total,
			counts.KeystoneApplicationCredentials.Total)
	case ready != nil && condition.SeverityRank(ready.Severity) > 0:
		return counts, condition.FalseVerdict(condition.Reason{Name: ready.Reason, Severity: ready.Severity},
			"%s %s: %s (%d of %d registrations not ready)", worst.Kind, worst.Object.GetName(), ready.Message, notReady, len(regs))
	}
	return counts, condition.FalseVerdict(condition.Requested, "%d of %d registrations not ready yet, among them %s %s",
		notReady, len(regs), worst.Kind, worst.Object.GetName())
}
