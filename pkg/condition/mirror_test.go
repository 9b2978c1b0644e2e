package condition

import (
	"testing"

	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// dependent is a Dependent for the tests: a named object with conditions that can be
// being deleted.
type dependent struct {
	metav1.ObjectMeta
	conditions lc.Conditions
}

func (d *dependent) GetConditions() lc.Conditions { return d.conditions }

func readyConditions(status corev1.ConditionStatus, reason lc.Reason, severity lc.Severity, msg string) lc.Conditions {
	return lc.Conditions{{Type: ReadyCondition, Status: status, Reason: reason, Severity: severity, Message: msg}}
}

// TestDependency: none and being deleted are DependencyNotFound with the caller's
// words; otherwise the object's Ready is mirrored.
func TestDependency(t *testing.T) {
	g := NewWithT(t)
	var none *dependent
	v := Dependency("KeystoneAPI", none, "no KeystoneAPI in namespace openstack", "")
	g.Expect([]any{v.True, v.Reason, v.Message}).To(Equal([]any{false, DependencyNotFound, "no KeystoneAPI in namespace openstack"}))

	deleting := &dependent{ObjectMeta: metav1.ObjectMeta{Name: "keystone", DeletionTimestamp: &metav1.Time{Time: t0}},
		conditions: readyConditions(corev1.ConditionTrue, "Ready", "", "ready")}
	v = Dependency("KeystoneAPI", deleting, "none", "KeystoneAPI keystone is being deleted")
	g.Expect([]any{v.True, v.Reason, v.Message}).To(Equal([]any{false, DependencyNotFound, "KeystoneAPI keystone is being deleted"}))

	failing := &dependent{ObjectMeta: metav1.ObjectMeta{Name: "keystone"},
		conditions: readyConditions(corev1.ConditionFalse, "Failed", lc.SeverityError, "InputReady: bad")}
	v = Dependency("KeystoneAPI", failing, "none", "deleting")
	g.Expect([]any{v.True, v.Reason.Name, v.Reason.Severity, v.Message}).To(Equal([]any{false, lc.Reason("Failed"), lc.SeverityError,
		"KeystoneAPI keystone: InputReady: bad"}), "mirrored, as Mirror does")
	g.Expect(Dependency("KeystoneAPI", &dependent{ObjectMeta: metav1.ObjectMeta{Name: "keystone"},
		conditions: readyConditions(corev1.ConditionTrue, "Ready", "", "ready")}, "none", "deleting").True).To(BeTrue())
}

// TestAggregate: the worst of the members not Ready is the most severe, then the lowest
// rank, then the first name; Ready ones and no Ready yet (as Info) are counted right.
func TestAggregate(t *testing.T) {
	g := NewWithT(t)
	member := func(kind string, rank int, name string, c lc.Conditions) Member {
		return Member{Kind: kind, Rank: rank, Object: Of(name, c)}
	}
	ready := member("A", 0, "ready", readyConditions(corev1.ConditionTrue, "Ready", "", "ok"))
	fresh := member("A", 0, "fresh", nil)
	info := member("B", 1, "info", readyConditions(corev1.ConditionFalse, "Requested", lc.SeverityInfo, "working"))
	warnB := member("B", 1, "warn", readyConditions(corev1.ConditionFalse, "Refused", lc.SeverityWarning, "refused"))
	warnA := member("A", 0, "zz-warn", readyConditions(corev1.ConditionFalse, "Refused", lc.SeverityWarning, "refused"))
	errB := member("B", 1, "err", readyConditions(corev1.ConditionFalse, "Failed", lc.SeverityError, "failed"))

	n, worst, c := Aggregate([]Member{ready})
	g.Expect([]any{n, worst, c}).To(Equal([]any{0, (*Member)(nil), (*lc.Condition)(nil)}), "all Ready")

	n, worst, c = Aggregate([]Member{ready, info, fresh})
	g.Expect(n).To(Equal(2))
	g.Expect(worst.Object.GetName()).To(Equal("fresh"), "no Ready yet counts as Info; the lower rank first")
	g.Expect(c).To(BeNil())

	n, worst, c = Aggregate([]Member{info, warnB, warnA, ready})
	g.Expect(n).To(Equal(3))
	g.Expect(worst.Object.GetName()).To(Equal("zz-warn"), "a Warning before Info; among Warnings the lower rank")
	g.Expect(c.Reason).To(Equal(lc.Reason("Refused")))

	_, worst, _ = Aggregate([]Member{warnA, errB, member("B", 1, "aa-err", readyConditions(corev1.ConditionFalse, "Failed", lc.SeverityError, "x"))})
	g.Expect(worst.Object.GetName()).To(Equal("aa-err"), "an Error first; same severity and rank: by name")
}
