package permissions

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Rules are the rules the API server reviewed for the manager in one namespace (those
// of ClusterRoles included). Zero Rules, not reviewed, allow everything: without an
// answer the manager asks, and handles a refusal where it comes.
type Rules struct {
	reviewed bool
	rules    []authorizationv1.ResourceRule
	// onKinds remembers AllowsOn's answers by verb and Go type: a reconcile asks about
	// the same kinds again and again, and the rules do not change.
	onKinds *sync.Map
}

// Reviewed returns the rules a SelfSubjectRulesReview answered.
func Reviewed(rules []authorizationv1.ResourceRule) Rules {
	return Rules{reviewed: true, rules: rules, onKinds: &sync.Map{}}
}

// onKind is a key of Rules.onKinds.
type onKind struct {
	verb string
	kind reflect.Type
}

// Review asks the API server what the user of c may do in namespace (one
// SelfSubjectRulesReview, which every authenticated user may create). An incomplete
// answer (an authorizer that cannot list its rules) is not used: the zero Rules and the
// reason are returned.
func Review(ctx context.Context, c client.Client, namespace string) (Rules, string, error) {
	review := &authorizationv1.SelfSubjectRulesReview{Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: namespace}}
	if err := c.Create(ctx, review); err != nil {
		return Rules{}, "", fmt.Errorf("asking the API server what the manager may do in namespace %s: %w", namespace, err)
	}
	if review.Status.Incomplete {
		return Rules{}, review.Status.EvaluationError, nil
	}
	return Reviewed(review.Status.ResourceRules), "", nil
}

// Known tells whether the rules were reviewed.
func (r Rules) Known() bool { return r.reviewed }

// Allows tells whether the rules grant verb on group/resource: on every name, or, with
// names, on each of them. Rules not reviewed allow everything.
func (r Rules) Allows(verb, group, resource string, names ...string) bool {
	if !r.reviewed {
		return true
	}
	match := func(list []string, v string) bool { return slices.Contains(list, v) || slices.Contains(list, "*") }
	for _, rule := range r.rules {
		if !match(rule.APIGroups, group) || !match(rule.Resources, resource) || !match(rule.Verbs, verb) {
			continue
		}
		if len(rule.ResourceNames) == 0 ||
			(len(names) > 0 && !slices.ContainsFunc(names, func(n string) bool { return !slices.Contains(rule.ResourceNames, n) })) {
			return true
		}
	}
	return false
}

// Client is a client that knows the rules its user was granted.
type Client struct {
	client.Client
	Rules Rules
}

// AllowsOn tells whether the rules grant verb on obj's kind (its resource found with
// the client's REST mapper); true when that cannot be told.
func (c Client) AllowsOn(verb string, obj client.Object) bool {
	if !c.Rules.reviewed {
		return true
	}
	// Unstructured objects and object metadata of every kind share a Go type: they are
	// not remembered.
	_, unstructured := obj.(runtime.Unstructured)
	if _, metadata := obj.(*metav1.PartialObjectMetadata); metadata {
		unstructured = true
	}
	key := onKind{verb: verb, kind: reflect.TypeOf(obj)}
	if !unstructured {
		if allowed, ok := c.Rules.onKinds.Load(key); ok {
			return allowed.(bool)
		}
	}
	gvk, err := c.GroupVersionKindFor(obj)
	if err != nil {
		return true
	}
	mapping, err := c.RESTMapper().RESTMapping(schema.GroupKind{Group: gvk.Group, Kind: gvk.Kind}, gvk.Version)
	if err != nil {
		return true // not remembered: the kind may be installed later
	}
	allowed := c.Rules.Allows(verb, mapping.Resource.Group, mapping.Resource.Resource)
	if !unstructured {
		c.Rules.onKinds.Store(key, allowed)
	}
	return allowed
}

// Allows tells whether the rules grant verb on group/resource, on names if given
// (Rules.Allows): for what has no kind the client knows, such as OpenShift's
// SecurityContextConstraints on another cluster.
func (c Client) Allows(verb, group, resource string, names ...string) bool {
	return c.Rules.Allows(verb, group, resource, names...)
}

// Allower is a client that knows what it may do (Client).
type Allower interface {
	AllowsOn(verb string, obj client.Object) bool
	Allows(verb, group, resource string, names ...string) bool
}

// Allows tells whether c may do verb on group/resource (and names): as c's rules say
// when c knows them, else yes.
func Allows(c client.Client, verb, group, resource string, names ...string) bool {
	if a, ok := c.(Allower); ok {
		return a.Allows(verb, group, resource, names...)
	}
	return true
}

// AllowsOn tells whether c may do verb on obj: as c's rules say when c knows them, else yes.
func AllowsOn(c client.Client, verb string, obj client.Object) bool {
	if a, ok := c.(Allower); ok {
		return a.AllowsOn(verb, obj)
	}
	return true
}
