package keystoneapi

import (
	"context"
	"fmt"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/reconciler"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// registration is what the consolidated view reads of one registration.
type registration struct {
	kind, name string
	// ready is its Ready condition, nil before its first round.
	ready *lc.Condition
}

// registrationOf reads a registration object: its kind, name and conditions.
func registrationOf(o client.Object) (kind string, conditions lc.Conditions, ok bool) {
	switch r := o.(type) {
	case *keystonev1.KeystoneService:
		return "KeystoneService", r.Status.Conditions, true
	case *keystonev1.KeystoneEndpoint:
		return "KeystoneEndpoint", r.Status.Conditions, true
	case *keystonev1.KeystoneApplicationCredential:
		return "KeystoneApplicationCredential", r.Status.Conditions, true
	}
	return "", nil, false
}

// RegistrationsViewInterval is how often at most the registrations' changes wake a
// KeystoneAPI's view: a change is seen at once, and the changes of a burst (a control
// plane's registrations created at once) in one round per interval (BENCHMARKS.md, the
// consolidated view).
const RegistrationsViewInterval = 5 * time.Second

// registrationsView wakes the namespace's KeystoneAPIs for a registration's change, at
// most once per RegistrationsViewInterval.
func (r *Reconciler) registrationsView() handler.EventHandler {
	return reconciler.Throttled(reconciler.EnqueueInNamespace(r.Client, &keystonev1.KeystoneAPIList{}, nil), RegistrationsViewInterval)
}

// registrationReadyChanged passes what changes the consolidated view: a registration
// created or gone, and its Ready as Mirror with Steady sees it (status, reason, severity, and
// the message of a Warning or Error), not the progress of its every round.
var registrationReadyChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		_, o, ok1 := registrationOf(e.ObjectOld)
		_, n, ok2 := registrationOf(e.ObjectNew)
		return !ok1 || !ok2 || condition.MirrorKey(o, condition.Steady()) != condition.MirrorKey(n, condition.Steady())
	},
	GenericFunc: func(event.GenericEvent) bool { return false },
}

// reconcileRegistrations reports RegistrationsReady and status.registrations from the
// namespace's registrations, read from the cache. It is not a step: it runs every round
// that was not halted, and what it reports never gates Ready.
func (r *Reconciler) reconcileRegistrations(ctx context.Context, s *scope) (ctrl.Result, error) {
	var all []registration
	lists := []client.ObjectList{&keystonev1.KeystoneServiceList{}, &keystonev1.KeystoneEndpointList{},
		&keystonev1.KeystoneApplicationCredentialList{}}
	for _, list := range lists {
		// Read, never changed: the cache's objects themselves, not copies of a namespace's hundreds.
		if err := r.List(ctx, list, client.InNamespace(s.api.Namespace), client.UnsafeDisableDeepCopy); err != nil {
			return ctrl.Result{}, fmt.Errorf("listing the namespace's registrations: %w", err)
		}
		if err := apimeta.EachListItem(list, func(o runtime.Object) error {
			obj := o.(client.Object)
			kind, conditions, _ := registrationOf(obj)
			all = append(all, registration{kind: kind, name: obj.GetName(), ready: conditions.Get(condition.ReadyCondition)})
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

// severityRank orders a registration's Ready by severity (condition.SeverityRank);
// without a Ready yet, as Info.
func severityRank(c *lc.Condition) int {
	if c == nil {
		return 0
	}
	return condition.SeverityRank(c.Severity)
}

// kindRank orders the registration kinds as they depend on each other.
var kindRank = map[string]int{"KeystoneService": 0, "KeystoneEndpoint": 1, "KeystoneApplicationCredential": 2}

// registrationsVerdict is the consolidated view of a namespace's registrations: how
// many of each kind exist and are Ready, and RegistrationsReady: True when every one is
// Ready (or there is none); else False for the most severe registration that is not
// (Error, then Warning, then by kind and name), with its Ready reason, severity and
// message; while none fails, Requested (Info) naming how many are not ready yet.
func registrationsVerdict(regs []registration) (keystonev1.KeystoneAPIRegistrations, condition.Verdict) {
	var counts keystonev1.KeystoneAPIRegistrations
	var worst *registration
	countOf := map[string]*keystonev1.RegistrationCount{"KeystoneService": &counts.KeystoneServices,
		"KeystoneEndpoint": &counts.KeystoneEndpoints, "KeystoneApplicationCredential": &counts.KeystoneApplicationCredentials}
	notReady := 0
	for i := range regs {
		reg := &regs[i]
		count := countOf[reg.kind]
		count.Total++
		if reg.ready != nil && reg.ready.Status == corev1.ConditionTrue {
			count.Ready++
			continue
		}
		notReady++
		if worst == nil || severityRank(reg.ready) > severityRank(worst.ready) ||
			(severityRank(reg.ready) == severityRank(worst.ready) &&
				(kindRank[reg.kind] < kindRank[worst.kind] || (reg.kind == worst.kind && reg.name < worst.name))) {
			worst = reg
		}
	}
	switch {
	case len(regs) == 0:
		return counts, condition.TrueVerdict("no KeystoneService, KeystoneEndpoint or KeystoneApplicationCredential in the namespace")
	case worst == nil:
		return counts, condition.TrueVerdict("all %d registrations ready (KeystoneServices: %d, KeystoneEndpoints: %d, "+
			"KeystoneApplicationCredentials: %d)", len(regs), counts.KeystoneServices.Total, counts.KeystoneEndpoints.Total,
			counts.KeystoneApplicationCredentials.Total)
	case severityRank(worst.ready) > 0:
		return counts, condition.FalseVerdict(condition.Reason{Name: worst.ready.Reason, Severity: worst.ready.Severity},
			"%s %s: %s (%d of %d registrations not ready)", worst.kind, worst.name, worst.ready.Message, notReady, len(regs))
	}
	return counts, condition.FalseVerdict(condition.Requested, "%d of %d registrations not ready yet, among them %s %s",
		notReady, len(regs), worst.kind, worst.name)
}
