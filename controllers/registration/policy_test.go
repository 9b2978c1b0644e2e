package registration

import (
	"testing"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPasswordRefusal (docs/security.md, spec.secret of a registration): a user's
// password is never read where the admin's is (the KeystoneAPI's Secret under its admin
// key, or the cleanup copy under its key); the same Secrets under another key, as
// openstack-operator's osp-secret holds every service's password beside the admin's,
// and other Secrets under the admin's key, are read.
func TestPasswordRefusal(t *testing.T) {
	api := &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Namespace: "openstack"},
		Spec: keystonev1.KeystoneAPISpec{Secret: "osp-secret"}}
	api.Spec.PasswordSelectors.Admin = "AdminPassword"
	for _, tt := range []struct {
		secret, key string
		refused     bool
	}{
		{"osp-secret", "AdminPassword", true},
		{"keystone-cleanup-credentials", "AdminPassword", true},
		{"osp-secret", "GlancePassword", false},
		{"keystone-cleanup-credentials", "GlancePassword", false},
		{"passwords", "AdminPassword", false},
		{"OSP-SECRET", "AdminPassword", false}, // another Secret: names are exact
	} {
		why := PasswordRefusal(api, "spec.secret", tt.secret, tt.key)
		if tt.refused {
			NewWithT(t).Expect(why).To(Equal("spec.secret " + tt.secret + " with key AdminPassword holds the admin's password of " +
				"KeystoneAPI keystone: no user of a registration is given it"))
		} else {
			NewWithT(t).Expect(why).To(BeEmpty(), tt.secret+"/"+tt.key)
		}
	}
}
