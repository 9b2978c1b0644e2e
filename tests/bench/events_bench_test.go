//go:build bench

package bench

import (
	"context"
	"fmt"
	"strings"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// eventAudit is row 9c: what became of the Events of row 9's registrations.
type eventAudit struct {
	// drained is how long after the last registration was Ready the manager's Events
	// were all posted (keystone_operator_events_pending 0).
	drained time.Duration
	// conditions counts the registrations' conditions that are not Unknown: each
	// changed at least once, and is owed an Event; missing those of them with none.
	conditions, missing int
	// events is the Events of the registrations (each one's count summed), dropped the
	// manager's keystone_operator_events_dropped_total.
	events, dropped float64
}

// auditEvents waits (at most 5 minutes) until the manager at metricsURL has posted
// every Event it recorded, then finds, for each KeystoneService and KeystoneEndpoint
// of namespaces, the conditions shown that no Event reported (an Event's message names
// its condition: "<type> is <status>: ..."). ready is when the last was Ready.
func auditEvents(ctx context.Context, metricsURL string, namespaces []string, ready time.Time) eventAudit {
	var a eventAudit
	for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(time.Second) {
		if pending, dropped := managerEventMetrics(metricsURL); pending == 0 {
			a.drained, a.dropped = time.Since(ready), dropped
			break
		}
		if time.Now().After(deadline) {
			panic("the manager's Events were not all posted within 5 minutes")
		}
	}
	reported := map[string]bool{} // kind/namespace/name/condition
	for _, ns := range namespaces {
		events := &corev1.EventList{}
		must(c.List(ctx, events, client.InNamespace(ns)))
		for _, e := range events.Items {
			o := e.InvolvedObject
			if o.Kind != "KeystoneService" && o.Kind != "KeystoneEndpoint" {
				continue
			}
			a.events += float64(e.Count)
			if i := strings.Index(e.Message, " is "); i > 0 {
				reported[strings.Join([]string{o.Kind, ns, o.Name, e.Message[:i]}, "/")] = true
			}
		}
		count := func(kind, name string, conditions lc.Conditions) {
			for _, cond := range conditions {
				if cond.Status == corev1.ConditionUnknown {
					continue
				}
				a.conditions++
				if !reported[strings.Join([]string{kind, ns, name, string(cond.Type)}, "/")] {
					a.missing++
				}
			}
		}
		services := &keystonev1.KeystoneServiceList{}
		must(c.List(ctx, services, client.InNamespace(ns)))
		for _, s := range services.Items {
			count("KeystoneService", s.Name, s.Status.Conditions)
		}
		endpoints := &keystonev1.KeystoneEndpointList{}
		must(c.List(ctx, endpoints, client.InNamespace(ns)))
		for _, e := range endpoints.Items {
			count("KeystoneEndpoint", e.Name, e.Status.Conditions)
		}
	}
	return a
}

// managerEventMetrics scrapes keystone_operator_events_pending and
// keystone_operator_events_dropped_total from the manager at url.
func managerEventMetrics(url string) (pending, dropped float64) {
	values := unlabelled(scrape(url))
	pending, ok := values["keystone_operator_events_pending"]
	if !ok {
		panic(fmt.Sprintf("no keystone_operator_events_pending at %s", url))
	}
	return pending, values["keystone_operator_events_dropped_total"]
}
