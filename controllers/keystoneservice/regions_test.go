package keystoneservice

import (
	"context"
	"net/http"
	"testing"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/controllers/registration"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/tests/support/fakekeystone"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// TestRegionWatch: the regions' watch wakes a KeystoneService it sees for the first time,
// then only when another cluster changes the record of its service or user (joins,
// changes its roles, hands over), never for a look that finds nothing changed or a
// change to another user.
func TestRegionWatch(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	const here, there = "KeystoneService/openstack/placement/uid-1@cluster-one", "KeystoneService/openstack/placement/uid-2@cluster-two"
	// Found by its type and name: a KeystoneService refused another's definition knows no ID.
	kc, woken := lookingAt(t, &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Name: "placement", Namespace: "openstack", UID: "uid-1"},
		Spec: keystonev1.KeystoneServiceSpec{ServiceType: "placement", ServiceName: "placement", ServiceUser: "placement"}})
	service, _, err := kc.EnsureService(ctx, "", identity.ServiceSpec{Type: "placement", Name: "placement", Enabled: true, Owner: here})
	g.Expect(err).NotTo(HaveOccurred())
	_, _, err = kc.EnsureUser(ctx, identity.UserSpec{Name: "placement", DomainID: "default", Password: "pw", PasswordFrom: "s", Owner: here})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(service.ID).NotTo(BeEmpty())

	g.Expect(woken()).To(Equal([]string{"placement"}), "seen for the first time")
	g.Expect(woken()).To(BeEmpty(), "nothing changed")

	_, _, err = kc.EnsureUser(ctx, identity.UserSpec{Name: "placement", DomainID: "default", Password: "pw", Owner: there,
		Roles: []string{"reader"}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(woken()).To(Equal([]string{"placement"}), "another region joined the user, asking for a role")
	_, _, err = kc.EnsureService(ctx, "", identity.ServiceSpec{Type: "placement", Name: "placement", Enabled: true, Owner: there})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(woken()).To(Equal([]string{"placement"}), "another region joined the service")

	_, _, err = kc.EnsureUser(ctx, identity.UserSpec{Name: "nova", DomainID: "default", Password: "pw", Owner: there})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(woken()).To(BeEmpty(), "another user's record is not this KeystoneService's")

	_, _, err = kc.EnsureService(ctx, "", identity.ServiceSpec{Type: "placement", Name: "placement", Description: "Placement",
		Enabled: true, Owner: here})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(woken()).To(Equal([]string{"placement"}), "the keeper defined the service otherwise")

	g.Expect(kc.DeleteUserNamed(ctx, "default", "placement", here, false)).To(Succeed())
	g.Expect(woken()).To(Equal([]string{"placement"}), "handed over")
}

// TestRegionWatchUserCase: a KeystoneService whose serviceUser differs from Keystone's
// user by case alone (Keystone finds users without case) is woken when that user's record
// changes.
func TestRegionWatchUserCase(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	kc, woken := lookingAt(t, &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Name: "glance", Namespace: "openstack", UID: "uid-1"},
		Spec: keystonev1.KeystoneServiceSpec{ServiceType: "image", ServiceName: "glance", ServiceUser: "GLANCE"}})
	const there = "KeystoneService/openstack/glance/uid-2@cluster-two"
	_, _, err := kc.EnsureUser(ctx, identity.UserSpec{Name: "glance", DomainID: "default", Password: "pw", Owner: there})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(woken()).To(Equal([]string{"glance"}), "seen for the first time")
	g.Expect(woken()).To(BeEmpty(), "nothing changed")
	g.Expect(kc.DeleteUserNamed(ctx, "default", "glance", there, false)).To(Succeed())
	g.Expect(woken()).To(Equal([]string{"glance"}), "the user another cluster held is gone")
}

// lookingAt starts a fake Keystone with a namespace openstack whose KeystoneAPI is at it,
// holding svc, and returns the admin's client of that Keystone and a function that has a
// regions' watch of the namespace look once and returns the names of the
// KeystoneServices it woke.
func lookingAt(t *testing.T, svc *keystonev1.KeystoneService) (*identity.Client, func() []string) {
	g := NewWithT(t)
	ctx := context.Background()
	ks := fakekeystone.New("admin", "secret-admin")
	t.Cleanup(ks.Close)
	scheme := runtime.NewScheme()
	g.Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	g.Expect(keystonev1.AddToScheme(scheme)).To(Succeed())
	api := &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Namespace: "openstack"},
		Spec: keystonev1.KeystoneAPISpec{Secret: "osp-secret", AdminUser: "admin", AdminProject: "admin",
			PasswordSelectors: keystonev1.PasswordSelector{Admin: "AdminPassword"}},
		Status: keystonev1.KeystoneAPIStatus{APIEndpoints: map[string]string{"internal": ks.URL}}}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "osp-secret", Namespace: "openstack"},
		Data: map[string][]byte{"AdminPassword": []byte("secret-admin")}}
	clients := &identity.Clients{Transport: &http.Transport{}}
	kc, err := clients.Get(ctx, identity.Credentials{URL: ks.URL, User: "admin", Password: "secret-admin", Project: "admin", Domain: "Default"})
	g.Expect(err).NotTo(HaveOccurred())
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(api, secret, svc).WithStatusSubresource(api).Build()
	w := newRegionWatch(&Reconciler{Base: registration.Base{Client: c, Keystone: clients}})
	return kc, func() []string {
		var names []string
		done := make(chan struct{})
		go func() {
			defer close(done)
			w.look(ctx)
		}()
		for {
			select {
			case e := <-w.events:
				names = append(names, e.Object.GetName())
			case <-done:
				return names
			}
		}
	}
}
