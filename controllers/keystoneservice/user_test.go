package keystoneservice

import (
	"context"
	"testing"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/controllers/registration"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// TestNewUser: a KeystoneService's user is created without a look-up first only in the
// round that created its first service, and only when no other KeystoneService of its
// namespace names the user (by spec, or by the record of a change of serviceUser); a
// namesake in another namespace does not count.
func TestNewUser(t *testing.T) {
	scheme := runtime.NewScheme()
	NewWithT(t).Expect(keystonev1.AddToScheme(scheme)).To(Succeed())
	svc := func(ns, name, user string) *keystonev1.KeystoneService {
		return &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(ns + "/" + name)},
			Spec: keystonev1.KeystoneServiceSpec{ServiceUser: user}}
	}
	recording := svc("a", "renamed", "other")
	recording.Annotations = map[string]string{UserAnnotation: "cinder"}
	c := fake.NewClientBuilder().WithScheme(scheme).WithIndex(&keystonev1.KeystoneService{}, userIndex, usersNamed).WithObjects(
		svc("a", "heat", "heat"), recording, svc("b", "glance", "glance")).Build()
	r := &Reconciler{Base: registration.Base{Client: c}}

	for _, tc := range []struct {
		name         string
		svc          *keystonev1.KeystoneService
		firstService bool
		want         bool
	}{
		{"its first service created in this round", svc("a", "glance", "glance"), true, true},
		{"its service there before (found, adopted, joined, or named by its status)", svc("a", "glance", "glance"), false, false},
		{"shared with another KeystoneService", svc("a", "heat-cfn", "heat"), true, false},
		{"the user another one is moving from", svc("a", "cinderv3", "cinder"), true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			fresh, err := r.newUser(context.Background(), &scope{service: tc.svc, firstService: tc.firstService})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(fresh).To(Equal(tc.want))
		})
	}
}
