package tree

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Show selects the conditions drawn under each object.
type Show string

const (
	// ShowBlocking draws the step each object waits on, and reports that are not True.
	ShowBlocking Show = "blocking"
	// ShowAll draws every condition.
	ShowAll Show = "all"
)

// Options select what Build draws.
type Options struct {
	Show Show
	// Wide draws every condition, and every Job and Deployment a KeystoneAPI owns with
	// their pods; without it, only the workloads its blocking step waits on.
	Wide bool
}

// Node is one object of the tree.
type Node struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Note says what the object is to its parent (a credential's current or previous
	// Secret) and who holds it.
	Note string `json:"note,omitempty"`
	// Ready is the object's Ready condition, nil when it has none.
	Ready      *Condition  `json:"ready,omitempty"`
	Conditions []Condition `json:"conditions,omitempty"`
	Children   []*Node     `json:"children,omitempty"`
}

// Condition is a condition as drawn.
type Condition struct {
	Type               string    `json:"type"`
	Status             string    `json:"status"`
	Severity           string    `json:"severity,omitempty"`
	Reason             string    `json:"reason,omitempty"`
	Message            string    `json:"message,omitempty"`
	LastTransitionTime time.Time `json:"lastTransitionTime"`
	// Blocking marks the first step that is not True: the one the object waits on.
	Blocking bool `json:"blocking,omitempty"`
}

// The consumers' finalizers on a credential's Secret are every finalizer but the
// credential's own protection (this suite's and keystone-operator's name for it).
var protections = []string{"keystone.openstack.org/ac-secret-protection", "openstack.org/ac-secret-protection"}

// summaries are the engine's conditions that repeat what Ready and a step say.
var summaries = []string{"Ready", "Reconciling", "Stalled"}

// Target names one Keystone object to draw the subtree of: its kind (KeystoneAPI,
// KeystoneService, KeystoneEndpoint, KeystoneApplicationCredential, as a kubectl name
// resolves) and name.
type Target struct {
	Kind, Name string
}

// Kinds are the kinds a Target may name.
var Kinds = []string{"KeystoneAPI", "KeystoneService", "KeystoneEndpoint", "KeystoneApplicationCredential"}

// Build reads the Keystone objects of namespace ns and returns the tree: every
// KeystoneAPI with the registrations under it, or, for a target, that object's subtree
// alone (not found: the API server's NotFound, as kubectl get says it).
func Build(ctx context.Context, c client.Reader, ns string, target *Target, opts Options) ([]*Node, error) {
	if opts.Wide {
		opts.Show = ShowAll
	}
	w := world{ns: ns, opts: opts}
	if err := w.read(ctx, c); err != nil {
		return nil, err
	}
	var roots []*Node
	for i := range w.apis.Items {
		roots = append(roots, w.keystoneAPI(&w.apis.Items[i]))
	}
	if len(w.apis.Items) == 0 {
		// Registrations without a KeystoneAPI still show what they wait for.
		roots = append(roots, w.registrations()...)
	}
	if target == nil {
		return roots, nil
	}
	if !slices.Contains(Kinds, target.Kind) {
		return nil, fmt.Errorf("%s is not a Keystone kind (%s)", target.Kind, strings.Join(Kinds, ", "))
	}
	if n := find(roots, target.Kind, target.Name); n != nil {
		return []*Node{n}, nil
	}
	resource := schema.GroupResource{Group: keystonev1.GroupVersion.Group, Resource: strings.ToLower(target.Kind) + "s"}
	return nil, apierrors.NewNotFound(resource, target.Name)
}

// BuildAll draws every namespace that holds a Keystone object: a Namespace node each,
// in name order, with that namespace's tree under it.
func BuildAll(ctx context.Context, c client.Reader, opts Options) ([]*Node, error) {
	found := map[string]bool{}
	for _, l := range []client.ObjectList{&keystonev1.KeystoneAPIList{}, &keystonev1.KeystoneServiceList{},
		&keystonev1.KeystoneEndpointList{}, &keystonev1.KeystoneApplicationCredentialList{}} {
		if err := c.List(ctx, l); err != nil {
			return nil, fmt.Errorf("listing %s in all namespaces: %w", listKind(l), err)
		}
		if err := meta.EachListItem(l, func(o runtime.Object) error {
			found[o.(client.Object).GetNamespace()] = true
			return nil
		}); err != nil {
			return nil, err
		}
	}
	namespaces := slices.Sorted(maps.Keys(found))
	out := make([]*Node, 0, len(namespaces))
	for _, ns := range namespaces {
		nodes, err := Build(ctx, c, ns, nil, opts)
		if err != nil {
			return nil, err
		}
		out = append(out, &Node{Kind: "Namespace", Name: ns, Children: nodes})
	}
	return out, nil
}

// listKind names a list's kind as a user reads it: "KeystoneAPIs".
func listKind(l client.ObjectList) string {
	return strings.TrimSuffix(reflect.TypeOf(l).Elem().Name(), "List") + "s"
}

func find(nodes []*Node, kind, name string) *Node {
	for _, n := range nodes {
		if n.Kind == kind && n.Name == name {
			return n
		}
		if found := find(n.Children, kind, name); found != nil {
			return found
		}
	}
	return nil
}

// world is what Build read.
type world struct {
	ns        string
	opts      Options
	apis      keystonev1.KeystoneAPIList
	services  keystonev1.KeystoneServiceList
	endpoints keystonev1.KeystoneEndpointList
	creds     keystonev1.KeystoneApplicationCredentialList
	secrets   map[string]*corev1.Secret
	// forbidden are the Secrets the user may not read.
	forbidden map[string]bool
	// placed marks the registrations already drawn under a KeystoneService.
	placed map[string]bool
	work   workloads
}

func (w *world) read(ctx context.Context, c client.Reader) error {
	for _, l := range []client.ObjectList{&w.apis, &w.services, &w.endpoints, &w.creds} {
		if err := c.List(ctx, l, client.InNamespace(w.ns)); err != nil {
			return fmt.Errorf("listing %s in namespace %s: %w", listKind(l), w.ns, err)
		}
	}
	sort.Slice(w.apis.Items, func(i, j int) bool { return w.apis.Items[i].Name < w.apis.Items[j].Name })
	sort.Slice(w.services.Items, func(i, j int) bool { return w.services.Items[i].Name < w.services.Items[j].Name })
	sort.Slice(w.endpoints.Items, func(i, j int) bool { return w.endpoints.Items[i].Name < w.endpoints.Items[j].Name })
	sort.Slice(w.creds.Items, func(i, j int) bool { return w.creds.Items[i].Name < w.creds.Items[j].Name })
	w.secrets, w.forbidden, w.placed = map[string]*corev1.Secret{}, map[string]bool{}, map[string]bool{}
	for _, ac := range w.creds.Items {
		for _, name := range []string{ac.Status.SecretName, ac.Status.PreviousSecretName} {
			if name == "" || w.secrets[name] != nil {
				continue
			}
			secret := &corev1.Secret{}
			switch err := c.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: name}, secret); {
			case apierrors.IsNotFound(err):
			case apierrors.IsForbidden(err):
				// Drawn as such; the rest of the tree is still drawn.
				w.forbidden[name] = true
			case err != nil:
				return fmt.Errorf("reading secret %s: %w", name, err)
			default:
				w.secrets[name] = secret
			}
		}
	}
	if w.needsWorkloads() {
		return w.readWorkloads(ctx, c)
	}
	return nil
}

func (w *world) keystoneAPI(api *keystonev1.KeystoneAPI) *Node {
	n := w.node("KeystoneAPI", api.Name, api.Status.Conditions)
	n.Children = append(w.workloadNodes(api), w.registrations()...)
	return n
}

// registrations are the KeystoneServices with what hangs under them, then the
// endpoints and credentials of no KeystoneService.
func (w *world) registrations() []*Node {
	var out []*Node
	for i := range w.services.Items {
		out = append(out, w.keystoneService(&w.services.Items[i]))
	}
	for i := range w.endpoints.Items {
		if ep := &w.endpoints.Items[i]; !w.placed["KeystoneEndpoint/"+ep.Name] {
			out = append(out, w.endpoint(ep))
		}
	}
	for i := range w.creds.Items {
		if ac := &w.creds.Items[i]; !w.placed["KeystoneApplicationCredential/"+ac.Name] {
			out = append(out, w.credential(ac))
		}
	}
	return out
}

// endpoint draws a KeystoneEndpoint, with the region its endpoints are in.
func (w *world) endpoint(ep *keystonev1.KeystoneEndpoint) *Node {
	n := w.node("KeystoneEndpoint", ep.Name, ep.Status.Conditions)
	if len(ep.Status.Endpoints) > 0 && ep.Status.Endpoints[0].Region != "" {
		n.Note = "region " + ep.Status.Endpoints[0].Region
	}
	return n
}

// keystoneService draws a service with its endpoints (spec.serviceName naming it, or
// its serviceName) and the credentials of its user.
func (w *world) keystoneService(svc *keystonev1.KeystoneService) *Node {
	n := w.node("KeystoneService", svc.Name, svc.Status.Conditions)
	for i := range w.endpoints.Items {
		ep := &w.endpoints.Items[i]
		if ep.Spec.ServiceName == svc.Name || (svc.Spec.ServiceName != "" && ep.Spec.ServiceName == svc.Spec.ServiceName) {
			w.placed["KeystoneEndpoint/"+ep.Name] = true
			n.Children = append(n.Children, w.endpoint(ep))
		}
	}
	for i := range w.creds.Items {
		ac := &w.creds.Items[i]
		if svc.Spec.ServiceUser != "" && ac.Spec.UserName == svc.Spec.ServiceUser && !w.placed["KeystoneApplicationCredential/"+ac.Name] {
			w.placed["KeystoneApplicationCredential/"+ac.Name] = true
			n.Children = append(n.Children, w.credential(ac))
		}
	}
	return n
}

// credential draws an application credential with its current and previous Secrets
// and the consumers' finalizers that hold them.
func (w *world) credential(ac *keystonev1.KeystoneApplicationCredential) *Node {
	n := w.node("KeystoneApplicationCredential", ac.Name, ac.Status.Conditions)
	for _, s := range []struct{ name, role string }{{ac.Status.SecretName, "current"}, {ac.Status.PreviousSecretName, "previous"}} {
		if s.name == "" {
			continue
		}
		note := s.role
		secret := w.secrets[s.name]
		switch {
		case w.forbidden[s.name]:
			note += ", not readable (forbidden to you)"
		case secret == nil:
			note += ", not found"
		case len(holders(secret)) > 0:
			note += ", held by " + strings.Join(holders(secret), ", ")
		}
		n.Children = append(n.Children, &Node{Kind: "Secret", Namespace: w.ns, Name: s.name, Note: note})
	}
	return n
}

// holders are the consumers' finalizers on a credential's Secret.
func holders(secret *corev1.Secret) []string {
	var out []string
	for _, f := range secret.Finalizers {
		if !slices.Contains(protections, f) {
			out = append(out, f)
		}
	}
	return out
}

// node is an object with its Ready and the conditions show selects.
func (w *world) node(kind, name string, conditions lc.Conditions) *Node {
	n := &Node{Kind: kind, Namespace: w.ns, Name: name}
	blocking := blockingStep(conditions)
	for _, c := range conditions {
		drawn := conditionOf(c, string(c.Type) == blocking)
		if c.Type == lc.ReadyCondition {
			n.Ready = &drawn
			continue
		}
		if w.opts.Show == ShowAll || drawn.Blocking || (!slices.Contains(summaries, drawn.Type) && c.Status == corev1.ConditionFalse &&
			condition.SeverityRank(c.Severity) > 0) {
			n.Conditions = append(n.Conditions, drawn)
		}
	}
	return n
}

// blockingStep is the step an object that is not Ready waits on: its first condition,
// in the list's order (steps before reports), that is not True; "" when it is Ready.
func blockingStep(conditions lc.Conditions) string {
	if conditions.IsTrue(lc.ReadyCondition) {
		return ""
	}
	for _, c := range conditions {
		if !slices.Contains(summaries, string(c.Type)) && c.Status != corev1.ConditionTrue {
			return string(c.Type)
		}
	}
	return ""
}

func conditionOf(c lc.Condition, blocking bool) Condition {
	return Condition{Type: string(c.Type), Status: string(c.Status), Severity: string(c.Severity), Reason: string(c.Reason),
		Message: c.Message, LastTransitionTime: c.LastTransitionTime.UTC(), Blocking: blocking}
}
