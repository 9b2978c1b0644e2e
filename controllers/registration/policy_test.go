package registration

import (
	"context"
	"testing"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// TestPasswordRefusal (docs/security.md, spec.secret of a registration): a user's
// password is never read where the admin's is (the KeystoneAPI's Secret under its admin
// key) nor from a Secret the KeystoneAPI writes (by name); the admin's Secret under
// another key, as openstack-operator's osp-secret holds every service's password beside
// the admin's, and other Secrets under the admin's key, are read.
func TestPasswordRefusal(t *testing.T) {
	api := &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Namespace: "openstack"},
		Spec: keystonev1.KeystoneAPISpec{Secret: "osp-secret"}}
	api.Spec.PasswordSelectors.Admin = "AdminPassword"
	for _, tt := range []struct {
		secret, key string
		refused     bool
	}{
		{"osp-secret", "AdminPassword", true},
		{"osp-secret", "GlancePassword", false},
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
	// What the KeystoneAPI writes, by name, whatever the key and whatever its owner
	// references say (whoever may patch a Secret can change those).
	for _, name := range []string{"keystone-cleanup-credentials", "openstack-config-secret", "keystone-config-data", "keystone",
		"keystone-keys", "keystone-db-secret"} {
		NewWithT(t).Expect(PasswordRefusal(api, "spec.secret", name, "secure.yaml")).To(Equal("spec.secret " + name +
			" is written by KeystoneAPI keystone and holds its secrets: no user of a registration is given them"))
	}
}

// TestControlledSecretRefusal (docs/security.md, spec.secret of a registration): a
// Secret a KeystoneAPI controls (openstack-config-secret, whose cloudrc and secure.yaml
// hold the admin's password, or any other it writes) is never where a user's password
// is read; a Secret it does not control, or one another kind controls, is.
func TestControlledSecretRefusal(t *testing.T) {
	secret := func(refs ...metav1.OwnerReference) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "openstack-config-secret", OwnerReferences: refs}}
	}
	controller := true
	api := metav1.OwnerReference{APIVersion: "keystone.openstack.org/v1beta1", Kind: "KeystoneAPI", Name: "keystone", Controller: &controller}
	notController := api
	notController.Controller = nil
	otherGroup := api
	otherGroup.APIVersion = "example.com/v1"
	g := NewWithT(t)
	g.Expect(ControlledSecretRefusal("spec.secret", secret(api))).To(Equal("spec.secret openstack-config-secret is written by " +
		"KeystoneAPI keystone and holds its secrets: no user of a registration is given them"))
	for _, s := range []*corev1.Secret{secret(), secret(notController), secret(otherGroup)} {
		g.Expect(ControlledSecretRefusal("spec.secret", s)).To(BeEmpty())
	}
}

// TestOtherAdmins (docs/security.md, policies that overlap): a name that is the admin
// user of another namespace's Ready KeystoneAPI at the same Keystone, in any case, is
// refused without naming that namespace; the namespace's own admin is UserRefusal's; the
// admin of a KeystoneAPI that is not Ready (whose login never worked: anyone may name
// anyone there) or of another Keystone bars no name. The IDs other namespaces'
// KeystoneAPIs recorded at the same Keystone are barred whatever their state; one a
// login elsewhere answered (a Keystone of whoever made that KeystoneAPI) bars nothing.
func TestOtherAdmins(t *testing.T) {
	g := NewWithT(t)
	api := func(ns, admin, url string, ready bool, id string) *keystonev1.KeystoneAPI {
		a := &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Namespace: ns, Generation: 1},
			Spec: keystonev1.KeystoneAPISpec{AdminUser: admin}}
		a.Status.APIEndpoints = map[string]string{keystonev1.EndpointInternal: url}
		a.Status.ObservedGeneration = 1
		if id != "" {
			a.Status.VerifiedAdmin = &keystonev1.VerifiedAdmin{ID: id, Endpoint: url}
		}
		if ready {
			a.Status.Conditions = lc.Conditions{{Type: lc.ReadyCondition, Status: corev1.ConditionTrue}}
		}
		return a
	}
	const shared = "https://keystone.example.com"
	mine := api("tenant-a", "tenant-a-operator", shared, true, "id-a")
	scheme := runtime.NewScheme()
	g.Expect(keystonev1.AddToScheme(scheme)).To(Succeed())
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(mine, api("tenant-a-2", "tenant-a-2-operator", shared, true, "id-a2"),
		api("pretender", "glance", shared, false, ""), api("elsewhere", "nova", "https://another-keystone.example.com", true, "id-victims-glance"),
		api("blipped", "tenant-a-3-operator", shared, false, "id-a3")).Build()
	others, err := ReadOtherAdmins(context.Background(), c, mine)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(others.IDs).To(Equal(map[string]bool{"id-a2": true, "id-a3": true}), "the namespace's own is not among them, "+
		"nor an ID another Keystone answered")
	for user, refused := range map[string]bool{"tenant-a-2-operator": true, "Tenant-A-2-Operator": true,
		"tenant-a-operator": false, "tenant-a-glance": false, "glance": false, "nova": false, "tenant-a-3-operator": false} {
		why := others.Refusal("spec.userName", user)
		if refused {
			g.Expect(why).To(Equal("spec.userName " + user + " is the admin user of another namespace's KeystoneAPI, " +
				"as which the operator acts for that namespace: no other namespace uses it"))
		} else {
			g.Expect(why).To(BeEmpty(), user)
		}
	}
}
