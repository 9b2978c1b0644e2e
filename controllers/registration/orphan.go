package registration

import (
	"errors"
	"fmt"
	"strings"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// A deletion that cannot remove its registration from Keystone (an external Keystone
// decommissioned, an admin password changed outside the operator, Keystone scaled to
// zero) waits, and says so in its step, with the way out: the annotation
// OrphanAnnotation on the object, or on the namespace's KeystoneAPI for all of them,
// lets it finish and leave what it registered in Keystone. A KeystoneAPI being deleted
// lets its registrations wait OrphanAfter at most. Either way what stays in Keystone is
// named in a Warning Event "Orphaned" on the object: nothing is left silently, as with
// Cluster API's and Crossplane's deletion policies.

// OrphanAnnotation is the annotation that, "true" on a KeystoneService, KeystoneEndpoint
// or KeystoneApplicationCredential (or on the KeystoneAPI of its namespace), lets its
// deletion finish without removing its registration from Keystone when Keystone cannot
// be reached or refuses.
const OrphanAnnotation = "keystone.openstack.org/orphan-on-delete"

// OrphanAfter is how long the registrations of a KeystoneAPI being deleted try to
// leave Keystone before they give up and orphan.
const OrphanAfter = 10 * time.Minute

// OrphanedReason is the Event that names what a deletion left in Keystone.
const OrphanedReason = "Orphaned"

// orphanHint ends the message of a deletion that cannot reach Keystone.
const orphanHint = "; to finish deleting and leave it in Keystone, annotate this object or the KeystoneAPI " +
	OrphanAnnotation + "=true"

// Orphaning says why obj's deletion may leave its registration in Keystone: the
// annotation on obj, on one of also (the KeystoneService an endpoint is under) or on
// api, or api deleted OrphanAfter ago already; "" when it may not.
func Orphaning(obj client.Object, api *keystonev1.KeystoneAPI, now time.Time, also ...client.Object) string {
	for _, o := range append([]client.Object{obj}, also...) {
		if o != nil && o.GetAnnotations()[OrphanAnnotation] == "true" {
			return fmt.Sprintf("%s %s annotated %s", kindOf(o), o.GetName(), OrphanAnnotation)
		}
	}
	switch {
	case api != nil && api.Annotations[OrphanAnnotation] == "true":
		return "KeystoneAPI " + api.Name + " annotated " + OrphanAnnotation
	case api != nil && !api.DeletionTimestamp.IsZero() && now.Sub(api.DeletionTimestamp.Time) >= OrphanAfter:
		return fmt.Sprintf("KeystoneAPI %s has been deleting for more than %s", api.Name, OrphanAfter)
	}
	return ""
}

// GiveUp ends a deregistration of obj that failed with err: when the deletion may
// orphan (Orphaning), it names what stays in Keystone (what) in a Warning Event and
// returns nil, so the deletion goes on; otherwise it adds the way out to step's message
// and returns err, retried (even one Keystone refused, while the KeystoneAPI is being
// deleted: OrphanAfter must come).
func GiveUp(rec record.EventRecorder, round *condition.Round, step lc.Type, obj client.Object, api *keystonev1.KeystoneAPI,
	now time.Time, what string, err error, also ...client.Object) error {
	if why := Orphaning(obj, api, now, also...); why != "" {
		at := "Keystone"
		if api != nil {
			at += " at " + api.Status.APIEndpoints[keystonev1.EndpointInternal]
		}
		rec.Eventf(obj, corev1.EventTypeWarning, OrphanedReason, "%s left in %s (%s): %v", what, at, why, err)
		return nil
	}
	if c := round.Get(step); c != nil && c.Status == corev1.ConditionFalse {
		round.MarkFalse(step, condition.Reason{Name: c.Reason, Severity: c.Severity}, "%s%s", c.Message, orphanHint)
	}
	if api != nil && !api.DeletionTimestamp.IsZero() && errors.Is(err, reconcile.TerminalError(nil)) {
		return errors.New(err.Error())
	}
	return err
}

// kindOf is the Go type name of obj, its kind for this suite's types ("KeystoneService").
func kindOf(obj client.Object) string {
	name := fmt.Sprintf("%T", obj)
	return name[strings.LastIndex(name, ".")+1:]
}
