package condition

import (
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
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

// Mirror is the verdict of a step mirroring the Ready condition of another object,
// identified by kind and name for the message. An object without a Ready condition yet is
// waited for (False/Info, Requested); a False Ready keeps its reason and severity.
func Mirror(kind, name string, other lc.Conditions, opts ...MirrorOption) Verdict {
	v := mirror(kind+" "+name, other.Get(ReadyCondition))
	if options(opts).steady && !v.True && v.Reason.Severity == lc.SeverityInfo {
		v.Message = kind + " " + name + " is not ready yet"
	}
	return v
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
func MirrorKey(conditions lc.Conditions, opts ...MirrorOption) string {
	c := conditions.Get(ReadyCondition)
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
