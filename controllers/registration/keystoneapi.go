package registration

import (
	"context"
	"fmt"
	"maps"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/access"
	"github.com/keystone-stepwise/keystone-operator/internal/finalizers"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

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

// MarkKeystoneAPI marks step from api, the namespace's KeystoneAPI (nil for none), as
// KeystoneAPIVerdict decides, and tells whether it is usable (the step True).
func MarkKeystoneAPI(round *condition.Round, step lc.Type, ns string, api *keystonev1.KeystoneAPI) bool {
	v := KeystoneAPIVerdict(ns, api)
	round.Apply(step, v)
	return v.True
}

// KeystoneAPIVerdict is a registration's KeystoneAPIReady from api, the namespace's
// KeystoneAPI (nil for none): True once usable (Ready for its current generation, with
// an internal endpoint, not being deleted). None, or one being deleted, is
// DependencyNotFound (Warning); its own progress is mirrored without its messages
// (condition.Mirror, Steady); Ready for an older generation, or without an internal
// endpoint, is Requested (Info).
func KeystoneAPIVerdict(ns string, api *keystonev1.KeystoneAPI) condition.Verdict {
	var deleting string
	if api != nil {
		deleting = fmt.Sprintf("KeystoneAPI %s is being deleted", api.Name)
	}
	if v := condition.Dependency("KeystoneAPI", api, "no KeystoneAPI in namespace "+ns, deleting, condition.Steady()); !v.True {
		return v
	}
	if !api.IsReady() || api.Status.APIEndpoints[keystonev1.EndpointInternal] == "" {
		return condition.FalseVerdict(condition.Requested, "KeystoneAPI %s: waiting for its current generation to be ready", api.Name)
	}
	return condition.TrueVerdict("KeystoneAPI %s is ready", api.Name)
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

// KeystoneAPIChanged passes the KeystoneAPI updates a registration depends on: Ready
// as Mirror with Steady mirrors it (not the messages of its progress), the generation it
// describes, the endpoints, the region, the admin's secret and user, what it allows its
// namespace (spec.registrationPolicy), deletion, OrphanAnnotation. Not, for example, the
// finalizers the registrations themselves add.
var KeystoneAPIChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*keystonev1.KeystoneAPI)
		n, ok2 := e.ObjectNew.(*keystonev1.KeystoneAPI)
		if !ok1 || !ok2 {
			return true
		}
		return condition.MirrorKey(o, condition.Steady()) != condition.MirrorKey(n, condition.Steady()) || o.Status.ObservedGeneration != n.Status.ObservedGeneration ||
			!maps.Equal(o.Status.APIEndpoints, n.Status.APIEndpoints) || o.Status.Region != n.Status.Region ||
			o.Spec.Secret != n.Spec.Secret || !o.DeletionTimestamp.Equal(n.DeletionTimestamp) ||
			o.Annotations[OrphanAnnotation] != n.Annotations[OrphanAnnotation] ||
			!equality.Semantic.DeepEqual(o.Policy(), n.Policy()) || o.Spec.AdminUser != n.Spec.AdminUser
	},
}

// SecretWakes is the filter of a registration kind's Secret watch
// (reconciler.EnqueueInNamespace): every object of the namespace when the Secret holds
// the admin's password or the CA bundle (tls.caBundleSecretName) of a KeystoneAPI
// there, which every round of the kind opens its session with (Session.Open) and waits
// for, or retries with backoff, while it is missing; else what own selects (nil: none),
// the objects naming the Secret themselves. A KeystoneAPI's Ready alone does not stand
// for its Secrets: one deleted and created again before the KeystoneAPI looks leaves it
// Ready, and a round that read it missing meanwhile waits on.
func SecretWakes(c client.Reader, own func(client.Object) []client.ListOption) func(client.Object) []client.ListOption {
	return func(o client.Object) []client.ListOption {
		apis := &keystonev1.KeystoneAPIList{}
		if err := c.List(context.Background(), apis, client.InNamespace(o.GetNamespace())); err != nil {
			return []client.ListOption{} // not known: every one looks
		}
		for _, api := range apis.Items {
			if name := o.GetName(); api.Spec.Secret == name || api.Spec.TLS.CaBundleSecretName == name {
				return []client.ListOption{}
			}
		}
		if own == nil {
			return nil
		}
		return own(o)
	}
}
