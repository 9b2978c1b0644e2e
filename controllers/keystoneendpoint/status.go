package keystoneendpoint

import (
	"fmt"
	"sort"
	"strings"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/endpointurl"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
)

// The decisions of KeystoneEndpoint's steps: pure functions from what a phase observed
// to the step's verdict, covered reason by reason in status_test.go. A Keystone error
// is the shared registration.Session's (FailedAs).

// serviceVerdict is KeystoneServiceReady from the KeystoneService of spec.serviceName
// (nil: none): missing or being deleted is DependencyNotFound (Warning); its Ready is
// mirrored (Mirror with Steady: every endpoint of a service mirrors it at once); then
// Requested (Info) until its current generation has a service ID.
func serviceVerdict(name string, svc *keystonev1.KeystoneService) condition.Verdict {
	if v := condition.Dependency("KeystoneService", svc, fmt.Sprintf("KeystoneService %s not found", name),
		fmt.Sprintf("KeystoneService %s is being deleted; its endpoints are removed", name), condition.Steady()); !v.True {
		return v
	}
	if !svc.IsReady() || svc.Status.ServiceID == "" {
		return condition.FalseVerdict(condition.Requested, "KeystoneService %s: waiting for its current generation to be registered", svc.Name)
	}
	return condition.TrueVerdict("KeystoneService %s is ready", svc.Name)
}

// endpointsVerdict is EndpointsReady for the spec's endpoints (urls) in region: True
// listing them as registered once Keystone has them, with a note on a URL Keystone
// takes but a client may not reach. They are not validated at admission
// (keystone-operator's schema does not either): one Keystone refuses
// (endpointurl.Check) is InvalidInput (Error); a URL without a host yet is Requested
// (Info), its service operator's moment before its Route has one.
func endpointsVerdict(urls map[string]string, region string) condition.Verdict {
	problem, pending, notes := invalidEndpoints(urls)
	if problem != "" {
		reason := condition.InvalidInput
		if pending {
			reason = condition.Requested
		}
		return condition.FalseVerdict(reason, "%s", problem)
	}
	return condition.TrueVerdict("%s in region %s%s", describe(urls), region, notes)
}

// describe lists interfaces and URLs, sorted: "internal http://..., public https://...".
func describe(urls map[string]string) string {
	if len(urls) == 0 {
		return "no endpoints"
	}
	parts := make([]string, 0, len(urls))
	for iface, u := range urls {
		parts = append(parts, iface+" "+u)
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// invalidEndpoints says what is wrong with the endpoints, "" when nothing: an
// interface Keystone does not have, or a URL it refuses. pending when all that is wrong
// is a URL without a host yet ("http://"). notes ("; ..." or "") say what Keystone takes
// but a client may stumble on.
func invalidEndpoints(urls map[string]string) (problem string, pending bool, notes string) {
	var hostless []string
	for _, iface := range sortedKeys(urls) {
		switch iface {
		case keystonev1.EndpointPublic, keystonev1.EndpointInternal, keystonev1.EndpointAdmin:
		default:
			return fmt.Sprintf("endpoint interface %q is not public, internal or admin", iface), false, ""
		}
		v := endpointurl.Check(urls[iface])
		switch {
		case v.Refused != "":
			return fmt.Sprintf("the %s endpoint %q %s, so Keystone refuses it", iface, urls[iface], v.Refused), false, ""
		case v.Pending:
			hostless = append(hostless, fmt.Sprintf("the %s endpoint %q", iface, urls[iface]))
		case v.Note != "":
			notes += fmt.Sprintf("; the %s endpoint: %s", iface, v.Note)
		}
	}
	if len(hostless) > 0 {
		return fmt.Sprintf("waiting for a host in %s (its operator sets it once its Route has one)", strings.Join(hostless, " and ")), true, ""
	}
	return "", false, notes
}

// endpointServiceRefusal says why no endpoint may go under svc, the service of
// KeystoneService ksName, which relates to it as ownership: adopted (existed unmarked)
// and not allowed by api (KeystoneAPI.AllowsAdoptedEndpoints), or
// another's; "" when endpoints may go there (created or claimed by the namespace,
// shared with its other regions).
func endpointServiceRefusal(api *keystonev1.KeystoneAPI, ksName string, svc *identity.Service, ownership identity.Ownership) string {
	switch ownership {
	case identity.Owned, identity.Joined:
		return ""
	case identity.Adopted:
		if !api.AllowsAdoptedEndpoints(svc.Type, svc.Name) {
			return fmt.Sprintf("service %s/%s (%s) existed in Keystone before KeystoneService %s adopted it: endpoints go only "+
				"under a service this namespace registered, or one KeystoneAPI %s lists (%s); its endpoints of earlier "+
				"versions stay, never rewritten nor removed", svc.Type, svc.Name, svc.ID, ksName, api.Name,
				api.AdoptedEndpointsSetting())
		}
		return ""
	}
	return fmt.Sprintf("service %s/%s (%s) is registered by %s, not by KeystoneService %s", svc.Type, svc.Name, svc.ID,
		identity.OwnerName(svc.Owner), ksName)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
