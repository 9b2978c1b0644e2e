package keystoneendpoint

import (
	"testing"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/tests/support/upstream"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestTakesKnown (docs/security.md, a namespace narrowed after keystone-operator): the
// unmarked endpoints keystone-operator recorded are taken under a service of the
// namespace (registered, claimed or shared by its KeystoneService, registered by another
// KeystoneService of the namespace, or about to be claimed on keystone-operator's proof
// where the KeystoneAPI allows it), never under one it adopted or another namespace's.
func TestTakesKnown(t *testing.T) {
	g := NewWithT(t)
	open := &keystonev1.KeystoneAPI{}
	narrowed := &keystonev1.KeystoneAPI{Spec: keystonev1.KeystoneAPISpec{
		RegistrationPolicy: &keystonev1.RegistrationPolicy{Services: []string{"*/tenant-a-*"}}}}
	ks := &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "glance"},
		Spec: keystonev1.KeystoneServiceSpec{ServiceName: "glance", ServiceUser: "glance"}}
	ks.Status = upstream.ServiceStatus(ks, "s1")
	glance := &identity.Service{ID: "s1", Type: "image", Name: "glance"}
	cases := []struct {
		name      string
		api       *keystonev1.KeystoneAPI
		service   *identity.Service
		ownership identity.Ownership
		takes     bool
	}{
		{"registered or claimed", narrowed, &identity.Service{ID: "s1"}, identity.Owned, true},
		{"shared with its other regions", narrowed, &identity.Service{ID: "s1"}, identity.Joined, true},
		{"adopted, about to be claimed on keystone-operator's proof", open, glance, identity.Adopted, true},
		{"adopted, the proof naming it, the KeystoneAPI not allowing it", narrowed, glance, identity.Adopted, false},
		{"adopted, no proof naming it", open, &identity.Service{ID: "s2", Type: "image", Name: "glance"}, identity.Adopted, false},
		{"another KeystoneService of the namespace's (a changed serviceName)", narrowed, &identity.Service{ID: "s3",
			Owner: "KeystoneService/tenant-a/glance-b/u2@c1"}, identity.Foreign, true},
		{"another namespace's", open, &identity.Service{ID: "s4", Owner: "KeystoneService/openstack/glance/u3@c1"},
			identity.Foreign, false},
		{"a mark of another kind", open, &identity.Service{ID: "s5", Owner: "Other/tenant-a/glance/u4@c1"}, identity.Foreign, false},
	}
	for _, c := range cases {
		g.Expect(takesKnown(c.api, ks, c.service, c.ownership)).To(Equal(c.takes), c.name)
	}
}
