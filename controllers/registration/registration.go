// Package registration holds what the controllers that register things in Keystone
// share: finding the namespace's KeystoneAPI and its admin's credentials, and
// reporting Keystone's answers as step conditions.
package registration

import (
	"context"
	"fmt"
	"maps"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/finalizers"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	"github.com/keystone-stepwise/keystone-operator/pkg/identity"
	"github.com/keystone-stepwise/keystone-operator/pkg/keystone"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	libtls "github.com/openstack-k8s-operators/lib-common/modules/common/tls"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// ConfirmInterval is how soon what a round wrote to Keystone is read back to confirm
// it: Keystone cannot be watched.
const ConfirmInterval = 200 * time.Millisecond

// DefaultConcurrency is how many objects of each registering kind reconcile at once
// unless the manager says otherwise (--registration-concurrency): registrations wait
// on Keystone and the API server, not on the CPU. Chosen by make bench (BENCHMARKS.md,
// row 9): 1,000 registrations took the same time with 4, 8 and 16, and more at once
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

// KeystoneAPI returns the namespace's KeystoneAPI: the first created (FirstKeystoneAPI),
// which is the one that deploys Keystone; any other is refused as InvalidInput by its
// own controller. When there is none, it returns the reason and message to report.
func KeystoneAPI(ctx context.Context, c client.Reader, ns string) (*keystonev1.KeystoneAPI, *condition.Reason, string, error) {
	list := &keystonev1.KeystoneAPIList{}
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, nil, "", fmt.Errorf("listing KeystoneAPIs: %w", err)
	}
	if api := FirstKeystoneAPI(list.Items); api != nil {
		return api, nil, "", nil
	}
	return nil, &condition.DependencyNotFound, "no KeystoneAPI in namespace " + ns, nil
}

// FirstKeystoneAPI returns the KeystoneAPI created first (by creation time, then by
// name), nil for none. keystone-operator's schema allows one per namespace in effect:
// the database, the KeystoneServices and openstack-config are the namespace's.
func FirstKeystoneAPI(items []keystonev1.KeystoneAPI) *keystonev1.KeystoneAPI {
	var first *keystonev1.KeystoneAPI
	for i := range items {
		a := &items[i]
		if first == nil || a.CreationTimestamp.Before(&first.CreationTimestamp) ||
			(a.CreationTimestamp.Equal(&first.CreationTimestamp) && a.Name < first.Name) {
			first = a
		}
	}
	return first
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

// MirrorKeystoneAPI marks step from the namespace's KeystoneAPI and returns it, with
// usable true once the step is True: Ready for its current generation, with an
// internal endpoint, not being deleted. api is nil when there is no single KeystoneAPI.
func MirrorKeystoneAPI(ctx context.Context, c client.Reader, round *condition.Round, step lc.Type, ns string) (
	api *keystonev1.KeystoneAPI, usable bool, err error) {
	api, reason, why, err := KeystoneAPI(ctx, c, ns)
	switch {
	case err != nil:
		return nil, false, err
	case api == nil:
		round.MarkFalse(step, *reason, "%s", why)
		return nil, false, nil
	case !api.DeletionTimestamp.IsZero():
		round.MarkFalse(step, condition.DependencyNotFound, "KeystoneAPI %s is being deleted", api.Name)
		return api, false, nil
	}
	if round.MirrorSteady(step, "KeystoneAPI", api.Name, api.Status.Conditions); !round.IsTrue(step) {
		return api, false, nil
	}
	if !api.IsReady() || api.Status.APIEndpoints[keystonev1.EndpointInternal] == "" {
		round.MarkFalse(step, condition.Requested, "KeystoneAPI %s: waiting for its current generation to be ready", api.Name)
		return api, false, nil
	}
	return api, true, nil
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

// AdminCredentials returns the credentials of api's admin at its internal endpoint;
// ok is false when the admin password Secret or its key is missing.
func AdminCredentials(ctx context.Context, c client.Reader, api *keystonev1.KeystoneAPI) (creds identity.Credentials, ok bool, err error) {
	password, ok, err := adminPassword(ctx, c, api)
	if err != nil || !ok {
		return creds, false, err
	}
	ca, err := CABundle(ctx, c, api)
	if err != nil {
		return creds, false, err
	}
	return adminAt(api, password, ca), true, nil
}

// adminPassword reads the admin's password from the KeystoneAPI's Secret; ok is false
// when the Secret or its key is missing.
func adminPassword(ctx context.Context, c client.Reader, api *keystonev1.KeystoneAPI) (password string, ok bool, err error) {
	secret := &corev1.Secret{}
	err = c.Get(ctx, client.ObjectKey{Namespace: api.Namespace, Name: api.Spec.Secret}, secret)
	if apierrors.IsNotFound(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("reading secret %s: %w", api.Spec.Secret, err)
	}
	value, found := secret.Data[api.Spec.PasswordSelectors.Admin]
	return string(value), found, nil
}

// CleanupCredentials returns the admin's credentials for removing a registration: the
// admin Secret's password and the CA bundle, or, for whichever of them is gone (a
// namespace deleted at once, a manifest deleted with its Secrets), the copy the
// KeystoneAPI keeps until no registration is left (keystone.CleanupSecretName).
func CleanupCredentials(ctx context.Context, c client.Reader, api *keystonev1.KeystoneAPI) (identity.Credentials, bool, error) {
	saved := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: api.Namespace, Name: keystone.CleanupSecretName(api)}, saved); client.IgnoreNotFound(err) != nil {
		return identity.Credentials{}, false, fmt.Errorf("reading secret %s: %w", keystone.CleanupSecretName(api), err)
	}
	password, ok, err := adminPassword(ctx, c, api)
	if err != nil {
		return identity.Credentials{}, false, err
	}
	if !ok {
		value, found := saved.Data[keystone.CleanupPasswordKey]
		if !found {
			return identity.Credentials{}, false, nil
		}
		password = string(value)
	}
	ca, err := CABundle(ctx, c, api)
	if err != nil {
		copied := saved.Data[keystone.CleanupCABundleKey]
		if len(copied) == 0 {
			return identity.Credentials{}, false, err
		}
		ca = copied
	}
	return adminAt(api, password, ca), true, nil
}

// adminAt is the admin's identity at api's internal endpoint, with password, trusting ca.
func adminAt(api *keystonev1.KeystoneAPI, password string, ca []byte) identity.Credentials {
	return identity.Credentials{
		URL: api.Status.APIEndpoints[keystonev1.EndpointInternal], User: api.Spec.AdminUser,
		Password: password, Project: api.Spec.AdminProject, Domain: "Default", CABundle: ca,
	}
}

// CABundle reads the PEM CA bundle of a KeystoneAPI's tls.caBundleSecretName; nil when
// none is named. A bundle named and missing is an error: Keystone's certificate is
// never accepted unverified.
func CABundle(ctx context.Context, c client.Reader, api *keystonev1.KeystoneAPI) ([]byte, error) {
	name := api.Spec.TLS.CaBundleSecretName
	if name == "" {
		return nil, nil
	}
	secret := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: api.Namespace, Name: name}, secret); err != nil {
		return nil, fmt.Errorf("reading the CA bundle secret %s of KeystoneAPI %s: %w", name, api.Name, err)
	}
	ca := secret.Data[libtls.CABundleKey]
	if len(ca) == 0 {
		return nil, fmt.Errorf("the CA bundle secret %s of KeystoneAPI %s has no key %s", name, api.Name, libtls.CABundleKey)
	}
	return ca, nil
}

// AdminMissing is the message of a step that cannot reach Keystone without the admin's password.
func AdminMissing(api *keystonev1.KeystoneAPI) string {
	return fmt.Sprintf("admin secret %s with key %s of KeystoneAPI %s not found", api.Spec.Secret,
		api.Spec.PasswordSelectors.Admin, api.Name)
}

// Reason takes a Keystone-specific reason's severity from the API's catalogue.
func Reason(name lc.Reason) condition.Reason {
	return condition.Reason{Name: name, Severity: keystonev1.ReasonSeverity[name]}
}

// Mark marks a registration step True. Where the round wrote to Keystone (changed),
// Keystone's successful answer to the write is what confirms the step: no later round
// reads it back, so a new registration costs only the requests it needs. The write is
// logged.
func Mark(ctx context.Context, round *condition.Round, step lc.Type, changed bool, format string, args ...any) {
	round.MarkTrue(step, format, args...)
	if changed {
		ctrl.LoggerFrom(ctx).Info("wrote to Keystone", "step", step, "result", fmt.Sprintf(format, args...))
	}
}

// Failed reports a Keystone error on step: a transient one (no answer, 5xx) or a stale
// cached ID is a Warning retried with backoff; a 404 that no valid session gets drops
// the session first; any other answer is the step's failed reason (Error), not retried
// until the spec or an input changes.
func Failed(round *condition.Round, clients *identity.Clients, creds identity.Credentials, step lc.Type,
	failed condition.Reason, err error) (ctrl.Result, error) {
	if identity.SessionSuspect(err) {
		clients.Forget(creds)
		round.MarkFalse(step, condition.ServiceUnavailable, "Keystone at %s: %s to a request that cannot get one; authenticating again",
			creds.URL, identity.Message(err))
		return ctrl.Result{}, err
	}
	if identity.Transient(err) || identity.Stale(err) {
		round.MarkFalse(step, condition.ServiceUnavailable, "Keystone at %s: %s", creds.URL, identity.Message(err))
		return ctrl.Result{}, err
	}
	round.MarkFalse(step, failed, "Keystone at %s refused: %s", creds.URL, identity.Message(err))
	return ctrl.Result{}, reconcile.TerminalError(err)
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

// EnqueueInNamespace wakes the objects of list's kind in an event object's namespace,
// those matching filter(object) when filter is set (nil from filter: none).
func EnqueueInNamespace(c client.Reader, list client.ObjectList, filter func(client.Object) []client.ListOption) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
		opts := []client.ListOption{client.InNamespace(o.GetNamespace())}
		if filter != nil {
			more := filter(o)
			if more == nil {
				return nil
			}
			opts = append(opts, more...)
		}
		l := list.DeepCopyObject().(client.ObjectList)
		if err := c.List(ctx, l, opts...); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing objects for a watch event")
			return nil
		}
		items, err := apimeta.ExtractList(l)
		if err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "reading a list for a watch event")
			return nil
		}
		reqs := make([]reconcile.Request, 0, len(items))
		for _, item := range items {
			if obj, ok := item.(client.Object); ok {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)})
			}
		}
		return reqs
	})
}
