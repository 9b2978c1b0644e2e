package keystoneservice

import (
	"context"
	"net/http"
	"testing"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/controllers/registration"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	"github.com/keystone-stepwise/keystone-operator/tests/support/fakekeystone"
	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
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
	kc, woken, _ := lookingAt(t, &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Name: "placement", Namespace: "openstack", UID: "uid-1"},
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

// TestRegionWatchBaseline: a look that has not seen a KeystoneService compares what it
// reads with the records its round left (leave) instead of waking it for one more round;
// a change after the round's reads still wakes it, and a round that changed a record it
// had read (its Seen spoiled) leaves nothing, so the look compares with its own previous
// read.
func TestRegionWatchBaseline(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	const here, there = "KeystoneService/openstack/placement/uid-1@cluster-one", "KeystoneService/openstack/placement/uid-2@cluster-two"
	svc := &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Name: "placement", Namespace: "openstack", UID: "uid-1"},
		Spec: keystonev1.KeystoneServiceSpec{ServiceType: "placement", ServiceName: "placement", ServiceUser: "placement"}}
	kc, woken, w := lookingAt(t, svc)
	service := identity.ServiceSpec{Type: "placement", Name: "placement", Enabled: true, Owner: here}
	user := identity.UserSpec{Name: "placement", DomainID: "default", Password: "pw", PasswordFrom: "s", Owner: here}
	// round registers svc's service and user as its round does, collecting what it sees,
	// and leaves it to the watch unless it is spoiled; it tells whether it left it.
	var serviceID string
	round := func(service identity.ServiceSpec) bool {
		seen := identity.NewSeen(svc.Spec.ServiceType, svc.Spec.ServiceUser)
		observed := identity.Observing(ctx, seen)
		registered, _, err := kc.EnsureService(observed, serviceID, service)
		g.Expect(err).NotTo(HaveOccurred())
		serviceID = registered.ID
		_, _, err = kc.EnsureUser(observed, user)
		g.Expect(err).NotTo(HaveOccurred())
		_, ok := seen.Records()
		w.leave(svc.UID, seen, svc.Spec)
		return ok
	}

	g.Expect(round(service)).To(BeTrue())
	g.Expect(woken()).To(BeEmpty(), "seen for the first time, but its round saw what the look reads")
	g.Expect(woken()).To(BeEmpty(), "nothing changed")

	g.Expect(round(service)).To(BeTrue())
	_, _, err := kc.EnsureUser(ctx, identity.UserSpec{Name: "placement", DomainID: "default", Password: "pw", Owner: there})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(woken()).To(Equal([]string{"placement"}), "another region joined the user after the round's reads")

	redefined := service
	redefined.Description = "Placement"
	g.Expect(round(redefined)).To(BeFalse(), "the round changed the service's definition")
	g.Expect(woken()).To(Equal([]string{"placement"}), "no baseline: the look compares with its previous read")
	g.Expect(round(redefined)).To(BeTrue())
	g.Expect(woken()).To(BeEmpty(), "the round after it saw the new definition")

	g.Expect(round(redefined)).To(BeTrue())
	w.roundStarts(svc.UID)
	_, _, err = kc.EnsureUser(ctx, identity.UserSpec{Name: "placement", DomainID: "default", Password: "pw", Owner: there, Roles: []string{"reader"}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(woken()).To(Equal([]string{"placement"}), "a later round that left nothing: what an earlier one left no longer counts")

	// A baseline of a KeystoneService gone is dropped by the look.
	w.leave("uid-gone", identity.NewSeen("placement", "placement"), svc.Spec)
	woken()
	w.mu.Lock()
	defer w.mu.Unlock()
	g.Expect(w.left).NotTo(HaveKey(types.UID("uid-gone")))
}

// TestRegionWatchBaselineOfItsType: a round that knows its service lists its type alone
// (share, not sharev2 of its group); the look compares the type's part of the group
// with what it left, so that the other type does not wake it at every look, and a
// change to its own type still does.
func TestRegionWatchBaselineOfItsType(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	const here = "KeystoneService/openstack/manila/uid-1@cluster-one"
	svc := &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Name: "manila", Namespace: "openstack", UID: "uid-1"},
		Spec: keystonev1.KeystoneServiceSpec{ServiceType: "share", ServiceName: "manila", ServiceUser: "manila"}}
	kc, woken, w := lookingAt(t, svc)
	share := identity.ServiceSpec{Type: "share", Name: "manila", Enabled: true, Owner: here}
	registered, _, err := kc.EnsureService(ctx, "", share)
	g.Expect(err).NotTo(HaveOccurred())
	_, _, err = kc.EnsureService(ctx, "", identity.ServiceSpec{Type: "sharev2", Name: "manilav2", Enabled: true,
		Owner: "KeystoneService/openstack/manilav2/uid-2@cluster-one"})
	g.Expect(err).NotTo(HaveOccurred())
	_, _, err = kc.EnsureUser(ctx, identity.UserSpec{Name: "manila", DomainID: "default", Password: "pw", PasswordFrom: "s", Owner: here})
	g.Expect(err).NotTo(HaveOccurred())
	round := func() {
		seen := identity.NewSeen(svc.Spec.ServiceType, svc.Spec.ServiceUser)
		_, changed, err := kc.EnsureService(identity.Observing(ctx, seen), registered.ID, share)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(changed).To(BeFalse())
		g.Expect(seen.WholeGroup()).To(BeFalse(), "its type listed alone")
		_, _, err = kc.EnsureUser(identity.Observing(ctx, seen), identity.UserSpec{Name: "manila", DomainID: "default", Password: "pw",
			PasswordFrom: "s", Owner: here})
		g.Expect(err).NotTo(HaveOccurred())
		w.leave(svc.UID, seen, svc.Spec)
	}
	round()
	g.Expect(woken()).To(BeEmpty(), "sharev2, of its group, is not what its round read")
	round()
	g.Expect(woken()).To(BeEmpty(), "nor at the next look")
	round()
	_, _, err = kc.EnsureService(ctx, registered.ID, identity.ServiceSpec{Type: "share", Name: "manila", Description: "Shares",
		Enabled: true, Owner: here})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(woken()).To(Equal([]string{"manila"}), "its own service changed after its round's reads")
}

// TestRoundLeavesRecords: the KeystoneService's phases read Keystone under the round's
// Seen (observed), and the last leaves what it saw to the regions' watch only when every
// step is True and nothing spoiled it (leaveRecords).
func TestRoundLeavesRecords(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	svc := &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Name: "placement", Namespace: "openstack", UID: "uid-1"},
		Spec: keystonev1.KeystoneServiceSpec{ServiceType: "placement", ServiceName: "placement", ServiceUser: "placement"}}
	kc, _, w := lookingAt(t, svc)
	r := &Reconciler{regions: w}
	service := identity.ServiceSpec{Type: "placement", Name: "placement", Enabled: true, Owner: "KeystoneService/openstack/placement/uid-1@c"}
	var serviceID string
	phase := func(ctx context.Context, _ *scope) (ctrl.Result, error) {
		registered, _, err := kc.EnsureService(ctx, serviceID, service)
		serviceID = registered.ID
		return ctrl.Result{}, err
	}
	// round runs the phase as the last one of a round whose steps are all True but
	// falseStep (none when ""), and returns what it left.
	round := func(falseStep lc.Type) (string, bool) {
		rnd := steps.Begin(nil, time.Now())
		for _, step := range rnd.Steps() {
			if step == falseStep {
				rnd.MarkFalse(step, condition.Requested, "not yet")
			} else {
				rnd.MarkTrue(step, "done")
			}
		}
		_, err := r.leaveRecords(observed(phase))(ctx, &scope{Session: registration.Session{Round: rnd}, service: svc, seen: identity.NewSeen(svc.Spec.ServiceType, svc.Spec.ServiceUser)})
		g.Expect(err).NotTo(HaveOccurred())
		left, ok := w.baseline(svc.UID)
		return left.fingerprint, ok
	}

	left, ok := round("")
	g.Expect(ok).To(BeTrue(), "every step True")
	records, err := kc.Records(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(left).To(Equal(fingerprint(records, svc.Spec)), "what the phase read and created, under the round's Seen")
	g.Expect(left).To(ContainSubstring(serviceID))

	_, ok = round(keystonev1.KeystoneServiceRoleAssignmentReady)
	g.Expect(ok).To(BeFalse(), "a step not True")

	service.Description = "Placement"
	_, ok = round("")
	g.Expect(ok).To(BeFalse(), "the phase changed the service's definition: spoiled")
}

// TestRegionWatchUserCase: a KeystoneService whose serviceUser differs from Keystone's
// user by case alone (Keystone finds users without case) is woken when that user's record
// changes.
func TestRegionWatchUserCase(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	kc, woken, _ := lookingAt(t, &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Name: "glance", Namespace: "openstack", UID: "uid-1"},
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
// holding svc, and returns the admin's client of that Keystone, a function that has a
// regions' watch of the namespace look once and returns the names of the
// KeystoneServices it woke, and the watch.
func lookingAt(t *testing.T, svc *keystonev1.KeystoneService) (*identity.Client, func() []string, *regionWatch) {
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
	}, w
}
