package keystoneservice

import (
	"context"
	"testing"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/controllers/registration"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// TestNewUser: a KeystoneService's user is created without a look-up first only while no
// round of it has evaluated its user, keystone-operator left no condition of it, and no
// other KeystoneService of its namespace names the user (by spec, or by the record of a
// change of serviceUser); a namesake in another namespace does not count.
func TestNewUser(t *testing.T) {
	svc := func(ns, name, user string, conditions ...lc.Condition) *keystonev1.KeystoneService {
		return &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(ns + "/" + name)},
			Spec: keystonev1.KeystoneServiceSpec{ServiceUser: user}, Status: keystonev1.KeystoneServiceStatus{Conditions: conditions}}
	}
	userReady := func(status corev1.ConditionStatus, reason lc.Reason) lc.Condition {
		return lc.Condition{Type: keystonev1.KeystoneServiceUserReady, Status: status, Reason: reason}
	}
	scheme := runtime.NewScheme()
	NewWithT(t).Expect(keystonev1.AddToScheme(scheme)).To(Succeed())
	recording := svc("a", "renamed", "other")
	recording.Annotations = map[string]string{UserAnnotation: "cinder"}
	c := fake.NewClientBuilder().WithScheme(scheme).WithIndex(&keystonev1.KeystoneService{}, userIndex, usersNamed).WithObjects(
		svc("a", "heat", "heat"), recording, svc("b", "glance", "glance")).Build()
	r := &Reconciler{Base: registration.Base{Client: c}}

	for _, tc := range []struct {
		name string
		svc  *keystonev1.KeystoneService
		want bool
	}{
		{"a first round", svc("a", "glance", "glance"), true},
		{"its user not evaluated yet", svc("a", "glance", "glance", userReady(corev1.ConditionUnknown, condition.InitReason)), true},
		{"its user Ready", svc("a", "glance", "glance", userReady(corev1.ConditionTrue, "Ready")), false},
		{"its user refused", svc("a", "glance", "glance", userReady(corev1.ConditionFalse, "InvalidInput")), false},
		{"its user's step failed", svc("a", "glance", "glance", userReady(corev1.ConditionFalse, "UserFailed")), false},
		{"taken over from keystone-operator", svc("a", "glance", "glance", upstreamConditions("glance", "4a7f", "glance")...), false},
		{"keystone-operator's user condition, not True", svc("a", "glance", "glance",
			lc.Condition{Type: upstreamUserReady, Status: corev1.ConditionFalse, Reason: "Error"}), false},
		{"shared with another KeystoneService", svc("a", "heat-cfn", "heat"), false},
		{"the user another one is moving from", svc("a", "cinderv3", "cinder"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			fresh, err := r.newUser(context.Background(), &scope{service: tc.svc})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(fresh).To(Equal(tc.want))
		})
	}
}
