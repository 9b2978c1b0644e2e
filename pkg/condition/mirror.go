package condition

import (
	"slices"

	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A step that waits for another object (a MariaDBDatabase, the namespace's KeystoneAPI)
// mirrors that object's Ready condition: Mirror, with options, is the one way to do it
// (Cluster API's util/conditions mirror and aggregate with options are the model).

// MirrorOption changes what Mirror takes from the other object's Ready.
type MirrorOption func(*mirrorOptions)

type mirrorOptions struct{ steady bool }

// Steady is for a dependency that many objects mirror at once (every object of a
// namespace mirroring one shared dependency): while the dependency merely progresses
// (Info), the message does not repeat the dependency's, which changes with every step it
// takes, so that its progress rewrites no status here; its reason and severity still are
// mirrored. A Warning or Error keeps the dependency's message.
func Steady() MirrorOption { return func(o *mirrorOptions) { o.steady = true } }

// Source is an object whose Ready condition a step mirrors: its name, for the
// message, and its conditions. Every kind of this suite is one (GetConditions); an
// object of another operator, whose conditions are a status field, is Of(name, them).
type Source interface {
	GetName() string
	GetConditions() lc.Conditions
}

type source struct {
	name       string
	conditions lc.Conditions
}

func (s source) GetName() string              { return s.name }
func (s source) GetConditions() lc.Conditions { return s.conditions }

// Of is the Source named name whose conditions are conditions.
func Of(name string, conditions lc.Conditions) Source {
	return source{name: name, conditions: conditions}
}

// Mirror is the verdict of a step mirroring the Ready condition of other, an object of
// kind (for the message). An object without a Ready condition yet is waited for
// (False/Info, Requested); a False Ready keeps its reason and severity.
func Mirror(kind string, other Source, opts ...MirrorOption) Verdict {
	name := other.GetName()
	v := mirror(kind+" "+name, readyOf(other))
	if options(opts).steady && !v.True && v.Reason.Severity == lc.SeverityInfo {
		v.Message = kind + " " + name + " is not ready yet"
	}
	return v
}

// Dependent is an object of this suite another one depends on: a Source that can be
// being deleted, compared with nil.
type Dependent interface {
	comparable
	Source
	GetDeletionTimestamp() *metav1.Time
}

// Dependency is the verdict of a step that needs obj, of kind (nil when it does not
// exist): DependencyNotFound (Warning) saying missing while there is none, or deleting
// while it is being deleted; else its Ready mirrored (Mirror with opts).
func Dependency[O Dependent](kind string, obj O, missing, deleting string, opts ...MirrorOption) Verdict {
	var none O
	switch {
	case obj == none:
		return FalseVerdict(DependencyNotFound, "%s", missing)
	case !obj.GetDeletionTimestamp().IsZero():
		return FalseVerdict(DependencyNotFound, "%s", deleting)
	}
	return Mirror(kind, obj, opts...)
}

// mirror is Mirror's verdict on ready (nil: none yet) of the object called prefix.
func mirror(prefix string, ready *lc.Condition) Verdict {
	switch {
	case ready == nil:
		return FalseVerdict(Requested, "%s: waiting for its status", prefix)
	case ready.Status == corev1.ConditionTrue:
		return TrueVerdict("%s is ready", prefix)
	}
	reason := Reason{Name: ready.Reason, Severity: ready.Severity}
	if reason.Severity == lc.SeverityNone {
		reason.Severity = lc.SeverityInfo
	}
	if reason.Name == "" {
		reason.Name = Requested.Name
	}
	return FalseVerdict(reason, "%s: %s", prefix, ready.Message)
}

// MirrorKey is what Mirror with opts takes from a Ready condition, "" without one: a
// watch that wakes mirrors compares it, so that it wakes them only when their verdict
// may change. With Steady, the message counts only where the severity is Warning or Error.
func MirrorKey(other Source, opts ...MirrorOption) string {
	if other == nil {
		return ""
	}
	c := readyOf(other)
	if c == nil {
		return ""
	}
	out := string(c.Status) + "/" + string(c.Reason) + "/" + string(c.Severity)
	if !options(opts).steady || SeverityRank(c.Severity) > 0 {
		out += "/" + c.Message
	}
	return out
}

func options(opts []MirrorOption) mirrorOptions {
	var o mirrorOptions
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// SeverityRank orders severities, most severe highest: Error 2, Warning 1, anything
// else (Info, none) 0. Whatever picks the worst of several conditions uses it.
func SeverityRank(s lc.Severity) int {
	switch s {
	case lc.SeverityError:
		return 2
	case lc.SeverityWarning:
		return 1
	}
	return 0
}

// Member is one object of an aggregate (Aggregate): its kind and the rank of that kind
// (lower first, as the kinds depend on each other), and the object.
type Member struct {
	Kind   string
	Rank   int
	Object Source
}

// Ready tells whether the member's Ready condition is True.
func (m Member) Ready() bool {
	c := readyOf(m.Object)
	return c != nil && c.Status == corev1.ConditionTrue
}

// ready is the member's Ready condition, nil before its first round.
func (m Member) ready() *lc.Condition { return readyOf(m.Object) }

// readyOf is the Ready condition of o, nil when it has none.
func readyOf(o Source) *lc.Condition {
	conditions := o.GetConditions()
	return conditions.Get(ReadyCondition)
}

// Aggregate sums up the Ready conditions of members, as Cluster API's
// conditions.Aggregate does: how many are not Ready, and the one to name, the most
// severe of those (Error, then Warning, then Info or none yet; then by rank and name),
// with its Ready (nil before its first round); worst is nil when every member is Ready.
func Aggregate(members []Member) (notReady int, worst *Member, ready *lc.Condition) {
	rank := func(m *Member) int {
		if c := m.ready(); c != nil {
			return SeverityRank(c.Severity)
		}
		return 0
	}
	for i := range members {
		m := &members[i]
		if m.Ready() {
			continue
		}
		notReady++
		if worst == nil || slices.Compare([]int{-rank(m), m.Rank}, []int{-rank(worst), worst.Rank}) < 0 ||
			(rank(m) == rank(worst) && m.Rank == worst.Rank && m.Object.GetName() < worst.Object.GetName()) {
			worst = m
		}
	}
	if worst != nil {
		ready = worst.ready()
	}
	return notReady, worst, ready
}
