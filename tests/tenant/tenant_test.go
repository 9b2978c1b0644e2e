package tenant

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/users"
	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/access"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/tests/support/keystoneadmin"
	"github.com/keystone-stepwise/keystone-operator/tests/support/upstream"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	isFalse = corev1.ConditionFalse
	isTrue  = corev1.ConditionTrue
)

// password sets key of the Secret passwords of namespace ns to value as c (a tenant, who
// writes Secrets but cannot read them: a merge patch of stringData).
func (w *world) password(t *testing.T, c client.Client, ns, key, value string) {
	t.Helper()
	g := NewWithT(t)
	s := secret(ns, "passwords", map[string]string{key: value})
	err := c.Create(context.Background(), s)
	if apierrors.IsAlreadyExists(err) {
		s = secret(ns, "passwords", map[string]string{key: value})
		err = c.Patch(context.Background(), s, client.Merge)
	}
	g.Expect(err).NotTo(HaveOccurred())
}

// change changes obj as c (a tenant).
func change[T client.Object](t *testing.T, c client.Client, obj T, mutate func(T)) {
	t.Helper()
	NewWithT(t).Eventually(func() error {
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		mutate(obj)
		return c.Update(context.Background(), obj)
	}, within, poll).Should(Succeed())
}

// TestRoles (docs/security.md, spec.roles): the tenant asks for Keystone's admin role
// (the CRD's default, keystone-operator's admin and service): refused, nothing written;
// with the role service alone, her user has that role and nothing of an admin.
func TestRoles(t *testing.T) {
	w, g := env(t), NewWithT(t)
	w.password(t, w.alice, tenantA, "roles", "tenant-a-roles-pw")
	svc := service(tenantA, "tenant-a-roles", "tenant-a-roles", "tenant-a-roles", "roles")
	create(t, w.alice, svc)
	g.Expect(expectCondition(t, w.alice, svc, keystonev1.KeystoneServiceInputReady, isFalse, "NotAllowed")).To(Equal(
		"spec.roles asks for role admin, which KeystoneAPI keystone does not allow (spec.registrationPolicy.roles: " +
			"[service tenant-a-*]); nothing is written to Keystone"))
	g.Expect(w.entities(t, "users", "name=tenant-a-roles")).To(BeEmpty(), "no user")
	g.Expect(w.entities(t, "services", "type=tenant-a-roles")).To(BeEmpty(), "no service")

	change(t, w.alice, svc, func(s *keystonev1.KeystoneService) { s.Spec.Roles = []string{"service"} })
	expectReady(t, w.alice, svc)
	g.Expect(w.userRoles(t, "tenant-a-roles")).To(Equal([]string{"service"}))
	as, err := keystoneadmin.Client(context.Background(), w.url, w.ca, "tenant-a-roles", "tenant-a-roles-pw", "service")
	g.Expect(err).NotTo(HaveOccurred())
	_, err = users.List(as, users.ListOpts{}).AllPages(context.Background())
	g.Expect(gophercloud.ResponseCodeIs(err, http.StatusForbidden)).To(BeTrue(), "her user lists no users: %v", err)
	deleted(t, w.alice, svc)
	g.Expect(w.entities(t, "users", "name=tenant-a-roles")).To(BeEmpty(), "hers: removed with her KeystoneService")
}

// TestRoleCreation (docs/security.md, role creation): a role Keystone lacks, which the
// KeystoneAPI lets her ask for but not create: refused before anything is written;
// Keystone has no such role, and no service or user of hers.
func TestRoleCreation(t *testing.T) {
	w, g := env(t), NewWithT(t)
	w.password(t, w.alice, tenantA, "observer", "tenant-a-observer-pw")
	before := names(w.entities(t, "roles", ""), "name")
	svc := service(tenantA, "tenant-a-observer", "tenant-a-observer", "tenant-a-observer", "observer", "service", "tenant-a-observer")
	create(t, w.alice, svc)
	g.Expect(expectCondition(t, w.alice, svc, keystonev1.KeystoneServiceInputReady, isFalse, "NotAllowed")).To(Equal(
		"spec.roles asks for tenant-a-observer, which Keystone lacks, and KeystoneAPI keystone does not let its namespace " +
			"create roles (spec.registrationPolicy.createRoles: false); nothing is written to Keystone"))
	touch(t, w.alice, svc, 3)
	g.Expect(names(w.entities(t, "roles", ""), "name")).To(Equal(before), "no role created")
	g.Expect(w.entities(t, "users", "name=tenant-a-observer")).To(BeEmpty())
	g.Expect(w.entities(t, "services", "type=tenant-a-observer")).To(BeEmpty())
	deleted(t, w.alice, svc)
}

// TestServicesAndUsers (docs/security.md, spec.serviceType and spec.serviceName,
// spec.serviceUser): services and users outside the KeystoneAPI's names, its own admin
// user, Keystone's admin under another case: each refused at InputReady, the victims as
// they were.
func TestServicesAndUsers(t *testing.T) {
	w, g := env(t), NewWithT(t)
	w.password(t, w.alice, tenantA, "any", "not-theirs")
	glanceBefore := w.entities(t, "services", "type=image")
	for _, c := range []struct {
		svc  *keystonev1.KeystoneService
		want string
	}{
		{service(tenantA, "image", "glance", "tenant-a-glance", "any", "service"), "spec.serviceType/spec.serviceName image/glance is " +
			"not among the services KeystoneAPI keystone allows (spec.registrationPolicy.services: [*/tenant-a-*])"},
		{service(tenantA, "tenant-a-x", "tenant-a-x", "glance", "any", "service"), "spec.serviceUser glance is not among the users " +
			"KeystoneAPI keystone allows (spec.registrationPolicy.users: [tenant-a-*])"},
		{service(tenantA, "tenant-a-y", "tenant-a-y", operatorA, "any", "service"), "spec.serviceUser tenant-a-operator is the " +
			"admin user of KeystoneAPI keystone, as which the operator acts: a namespace never uses it"},
		{service(tenantA, "tenant-a-z", "tenant-a-z", "Admin", "any", "service"), "spec.serviceUser Admin is not among the users"},
		{service(tenantA, "tenant-a-w", "tenant-a-w", "carol", "any", "service"), "spec.serviceUser carol is not among the users"},
	} {
		create(t, w.alice, c.svc)
		g.Expect(expectCondition(t, w.alice, c.svc, keystonev1.KeystoneServiceInputReady, isFalse, "NotAllowed")).To(HavePrefix(c.want))
	}
	g.Expect(w.entities(t, "services", "type=image")).To(Equal(glanceBefore), "glance's service as it was")
	g.Expect(w.entities(t, "services", "name=tenant-a-x")).To(BeEmpty())
	for user, password := range map[string]string{"glance": "glance-pw", "admin": adminPassword, operatorA: "tenant-a-operator-pw",
		"carol": "carol-pw"} {
		w.mustLogIn(t, user, password)
	}
	for _, name := range []string{"glance", "tenant-a-x", "tenant-a-y", "tenant-a-z", "tenant-a-w"} {
		deleted(t, w.alice, &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Namespace: tenantA, Name: name}})
	}
}

// TestNoLockout (docs/security.md, lockout): with Keystone locking a user out at its
// second refused login, the tenant tries to have the operator log in as others with her
// passwords, as often as she likes: refused before any login, or one login per version of
// her Secret; then she overwrites the admin password of her KeystoneAPI. Everyone still
// logs in; her namespace stops, no other.
func TestNoLockout(t *testing.T) {
	w, g := env(t), NewWithT(t)
	w.password(t, w.alice, tenantA, "guess", "a-guess")
	for _, user := range []string{"admin", "glance", "carol", "ops-admin", operatorA, "nova"} {
		ac := credential(tenantA, "ac-"+user, user, "guess")
		create(t, w.alice, ac)
		expectCondition(t, w.alice, ac, keystonev1.KeystoneApplicationCredentialInputReady, isFalse, "NotAllowed")
		touch(t, w.alice, ac, 3)
	}

	t.Log("her own user, with a wrong password: refused once, not tried again however often she touches the credential")
	w.password(t, w.alice, tenantA, "lock", "tenant-a-lock-pw")
	svc := service(tenantA, "tenant-a-lock", "tenant-a-lock", "tenant-a-lock", "lock", "service")
	create(t, w.alice, svc)
	expectReady(t, w.alice, svc)
	wrong := credential(tenantA, "ac-tenant-a-lock", "tenant-a-lock", "guess")
	create(t, w.alice, wrong)
	g.Expect(expectCondition(t, w.alice, wrong, keystonev1.KeystoneApplicationCredentialCredentialReady, isFalse,
		"UserAuthenticationFailed")).To(ContainSubstring("Keystone refused the password of user tenant-a-lock from secret passwords key guess"))
	touch(t, w.alice, wrong, 5)
	w.mustLogIn(t, "tenant-a-lock", "tenant-a-lock-pw")

	t.Log("in bob's namespace, whose KeystoneAPI acts as Keystone's admin: the admin under other names, never tried")
	w.password(t, w.bob, tenantB, "guess", "a-guess")
	for name, user := range map[string]string{"upper": "ADMIN", "accent": "àdmin"} {
		ac := credential(tenantB, "ac-"+name, user, "guess")
		create(t, w.bob, ac)
		step := keystonev1.KeystoneApplicationCredentialInputReady // as Keystone compares names, without case
		if name == "accent" {
			step = keystonev1.KeystoneApplicationCredentialCredentialReady // as Keystone finds it, the user looked up first
		}
		expectCondition(t, w.bob, ac, step, isFalse, "NotAllowed")
		touch(t, w.bob, ac, 3)
	}
	admin := service(tenantB, "tenant-b-admin", "tenant-b-admin", "Admin", "guess")
	create(t, w.bob, admin)
	expectCondition(t, w.bob, admin, keystonev1.KeystoneServiceInputReady, isFalse, "NotAllowed")
	touch(t, w.bob, admin, 3)
	accent := service(tenantB, "tenant-b-accent", "tenant-b-accent", "àdmin", "guess")
	create(t, w.bob, accent)
	g.Expect(expectCondition(t, w.bob, accent, keystonev1.KeystoneServiceUserReady, isFalse, "NotAllowed")).To(ContainSubstring(
		"Keystone finds user admin for the name àdmin: it is Keystone's admin"))
	touch(t, w.bob, accent, 3)
	w.mustLogIn(t, "admin", adminPassword)

	t.Log("she overwrites her KeystoneAPI's admin password (she writes Secrets): one refused login per version")
	restore := func() {
		g.Expect(w.cluster.Patch(context.Background(), secret(tenantA, "keystone-admin",
			map[string]string{"AdminPassword": "tenant-a-operator-pw"}), client.Merge)).To(Succeed())
	}
	t.Cleanup(restore)
	g.Expect(w.alice.Patch(context.Background(), secret(tenantA, "keystone-admin", map[string]string{"AdminPassword": "hers"}),
		client.Merge)).To(Succeed())
	api := &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Namespace: tenantA, Name: "keystone"}}
	g.Expect(expectCondition(t, w.alice, api, keystonev1.KeystoneAPIEndpointReady, isFalse, "InvalidInput")).To(ContainSubstring(
		"refused the credentials of admin tenant-a-operator in project admin; tried again when the secret keystone-admin or this KeystoneAPI changes"))
	expectCondition(t, w.alice, svc, keystonev1.KeystoneServiceKeystoneAPIReady, isFalse, "InvalidInput")
	touch(t, w.alice, svc, 5)
	touch(t, w.alice, wrong, 3)

	// No login of that user between the two (a login that works resets Keystone's count).
	t.Log("the operator restarts: the refusal it recorded on her KeystoneAPI is not tried again (a second would lock the user out)")
	annotations := func() (map[string]string, error) {
		err := w.cluster.Get(context.Background(), client.ObjectKeyFromObject(api), api)
		return api.Annotations, err
	}
	g.Eventually(annotations, within, poll).Should(HaveKeyWithValue(access.AdminLoginRefusedAnnotation, Not(BeEmpty())),
		"the refusal recorded on KeystoneAPI %s", api.Name)
	w.restart(t)
	touch(t, w.alice, svc, 3)
	touch(t, w.alice, wrong, 2)
	g.Eventually(func() string {
		return expectCondition(t, w.alice, api, keystonev1.KeystoneAPIEndpointReady, isFalse, "InvalidInput")
	}, within, poll).Should(ContainSubstring("the refusal is recorded on this KeystoneAPI"), "the restarted operator says the refusal it read")
	w.mustLogIn(t, operatorA, "tenant-a-operator-pw")
	w.mustLogIn(t, "admin", adminPassword)
	w.mustLogIn(t, "glance", "glance-pw")
	expectReady(t, w.cluster, &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Namespace: victim, Name: "glance"}})
	restore()
	expectReady(t, w.alice, svc)
	g.Eventually(annotations, within, poll).ShouldNot(HaveKey(access.AdminLoginRefusedAnnotation), "the record goes once a login works")
	deleted(t, w.alice, wrong)
	deleted(t, w.alice, svc)
	deleted(t, w.bob, admin)
	deleted(t, w.bob, accent)
}

// TestAdoptedPasswordTriedOnce (docs/security.md, spec.serviceUser): a user made by hand
// under a name she may use, asked for with a wrong password, is refused with one login
// (PasswordConflict); the operator's own writes since (the status saying so) and the
// regions' watch's looks try it no more, which a second refused login here would show
// as the user locked out; with the right password it is adopted, and stays when she
// deletes her KeystoneService.
func TestAdoptedPasswordTriedOnce(t *testing.T) {
	w, g := env(t), NewWithT(t)
	const user, password = "tenant-a-handmade", "tenant-a-handmade-pw"
	_, err := w.newUser(context.Background(), user, password, "", "", nil)
	g.Expect(err).NotTo(HaveOccurred())
	w.password(t, w.alice, tenantA, "handmade", "a-guess")
	svc := service(tenantA, "tenant-a-handmade", "tenant-a-handmade", user, "handmade", "service")
	create(t, w.alice, svc)
	g.Expect(expectCondition(t, w.alice, svc, keystonev1.KeystoneServiceUserReady, isFalse, "PasswordConflict")).To(
		ContainSubstring("existed before"))
	g.Expect(svc.Annotations).To(HaveKeyWithValue("keystone.openstack.org/password-refused", Not(BeEmpty())),
		"the refused check recorded, for an operator that restarts")
	t.Logf("waiting %s: 4 looks of the regions' watch, the first of which sees the KeystoneService at a new version", 4*regionRecheck)
	time.Sleep(4 * regionRecheck)
	w.mustLogIn(t, user, password)

	w.password(t, w.alice, tenantA, "handmade", password)
	expectReady(t, w.alice, svc)
	deleted(t, w.alice, svc)
	g.Expect(w.entities(t, "users", "name="+user)).To(HaveLen(1), "an adopted user is never deleted")
	w.mustLogIn(t, user, password)
}

// TestAdminPasswordNeverGiven (docs/security.md, spec.secret of a KeystoneService and of
// a KeystoneApplicationCredential): she names her KeystoneAPI's admin Secret and key, its
// cleanup copy, or openstack-config-secret (which the KeystoneAPI writes, its cloudrc and
// secure.yaml holding the admin's password) as her user's password: InputReady
// NotAllowed, no user made, no login tried.
func TestAdminPasswordNeverGiven(t *testing.T) {
	w, g := env(t), NewWithT(t)
	ctx := context.Background()
	config := types.NamespacedName{Namespace: tenantA, Name: "openstack-config-secret"}
	g.Eventually(func() error { return w.cluster.Get(ctx, config, &corev1.Secret{}) }, within, poll).Should(Succeed(),
		"her KeystoneAPI writes the admin's cloud configuration")
	for _, key := range []string{"secure.yaml", "cloudrc"} {
		name := "tenant-a-oracle-" + strings.TrimSuffix(key, ".yaml")
		svc := service(tenantA, name, name, name, key, "service")
		svc.Spec.Secret = config.Name
		create(t, w.alice, svc)
		g.Expect(expectCondition(t, w.alice, svc, keystonev1.KeystoneServiceInputReady, isFalse, "NotAllowed")).To(HavePrefix(
			"spec.secret openstack-config-secret is written by KeystoneAPI keystone and holds its secrets"))
		ac := credential(tenantA, "ac-"+name, name, key)
		ac.Spec.Secret = config.Name
		create(t, w.alice, ac)
		expectCondition(t, w.alice, ac, keystonev1.KeystoneApplicationCredentialInputReady, isFalse, "NotAllowed")
		g.Expect(w.entities(t, "users", "name="+name)).To(BeEmpty())
		deleted(t, w.alice, ac)
		deleted(t, w.alice, svc)
	}
	for name, secretName := range map[string]string{"tenant-a-oracle": "keystone-admin", "tenant-a-oracle-copy": "keystone-cleanup-credentials"} {
		svc := service(tenantA, name, name, name, "AdminPassword", "service")
		svc.Spec.Secret = secretName
		create(t, w.alice, svc)
		why := "spec.secret keystone-admin with key AdminPassword holds the admin's password of KeystoneAPI keystone: " +
			"no user of a registration is given it; nothing"
		if secretName != "keystone-admin" {
			why = "spec.secret " + secretName + " is written by KeystoneAPI keystone and holds its secrets"
		}
		g.Expect(expectCondition(t, w.alice, svc, keystonev1.KeystoneServiceInputReady, isFalse, "NotAllowed")).To(HavePrefix(why))
		ac := credential(tenantA, "ac-"+name, name, "AdminPassword")
		ac.Spec.Secret = secretName
		create(t, w.alice, ac)
		expectCondition(t, w.alice, ac, keystonev1.KeystoneApplicationCredentialInputReady, isFalse, "NotAllowed")
		g.Expect(w.entities(t, "users", "name="+name)).To(BeEmpty())
		deleted(t, w.alice, ac)
		deleted(t, w.alice, svc)
	}
	w.mustLogIn(t, operatorA, "tenant-a-operator-pw")
}

// TestFinalizersKept (docs/security.md, a registration's finalizers): with the recipe's
// step 6, she cannot strip the operator's finalizers from her KeystoneService,
// KeystoneEndpoint or credential (Forbidden, naming them), so their deletion removes
// what they registered. An admin who strips them by hand (or a namespace without step 6)
// has the object go without its deletion running: its service, endpoints and user stay
// in Keystone, marked as its; a KeystoneService of the same name takes them over, and
// its deletion removes them.
func TestFinalizersKept(t *testing.T) {
	w, g := env(t), NewWithT(t)
	ctx := context.Background()
	const name = "tenant-a-keep"
	w.password(t, w.alice, tenantA, "keep", "tenant-a-keep-pw")
	registration := func() (*keystonev1.KeystoneService, *keystonev1.KeystoneEndpoint) {
		return service(tenantA, name, name, name, "keep", "service"), &keystonev1.KeystoneEndpoint{
			ObjectMeta: metav1.ObjectMeta{Namespace: tenantA, Name: name},
			Spec:       keystonev1.KeystoneEndpointSpec{ServiceName: name, Endpoints: map[string]string{"public": "https://keep.example.com"}}}
	}
	svc, ep := registration()
	ac := credential(tenantA, "ac-"+name, name, "keep")
	for _, obj := range []client.Object{svc, ep, ac} {
		create(t, w.alice, obj)
		expectReady(t, w.alice, obj)
	}
	strip := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))
	for _, obj := range []client.Object{svc, ep, ac} {
		err := w.alice.Patch(ctx, obj, strip)
		g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%T: %v", obj, err)
		g.Expect(err.Error()).To(ContainSubstring("only the keystone operator removes keystone.openstack.org/"))
	}
	deleted(t, w.alice, ac)
	deleted(t, w.alice, ep)
	deleted(t, w.alice, svc)
	g.Expect(w.entities(t, "services", "name="+name)).To(BeEmpty(), "her deletion ran")
	g.Expect(w.entities(t, "users", "name="+name)).To(BeEmpty())

	t.Log("an admin strips the finalizers by hand: the registration stays in Keystone, marked as its")
	svc, ep = registration()
	for _, obj := range []client.Object{svc, ep} {
		create(t, w.alice, obj)
		expectReady(t, w.alice, obj)
	}
	for _, obj := range []client.Object{ep, svc} {
		g.Expect(w.cluster.Patch(ctx, obj, strip)).To(Succeed())
		g.Expect(w.cluster.Delete(ctx, obj)).To(Succeed())
		g.Eventually(func() bool { return apierrors.IsNotFound(w.cluster.Get(ctx, client.ObjectKeyFromObject(obj), obj)) },
			within, poll).Should(BeTrue())
	}
	left := w.entities(t, "services", "name="+name)
	g.Expect(left).To(HaveLen(1))
	g.Expect(left[0][identity.OwnerAttribute]).To(HavePrefix("KeystoneService/tenant-a/" + name + "/"))
	g.Expect(w.urls(t, fmt.Sprint(left[0]["id"]))).To(ConsistOf("https://keep.example.com"))
	g.Expect(w.entities(t, "users", "name="+name)).To(HaveLen(1))

	t.Log("a KeystoneService of that name takes them over, and its deletion removes them")
	again := service(tenantA, name, name, name, "keep", "service")
	create(t, w.alice, again)
	expectReady(t, w.alice, again)
	g.Expect(again.Status.ServiceID).To(Equal(left[0]["id"]))
	deleted(t, w.alice, again)
	g.Expect(w.entities(t, "services", "name="+name)).To(BeEmpty())
	g.Expect(w.entities(t, "users", "name="+name)).To(BeEmpty())
}

// TestAdoptedNeverRedefined (docs/security.md, spec.serviceDescription and enabled of a
// service that existed): a service made by hand, under a name the tenant may use, asked
// for with another description and disabled: refused, Keystone's as it was; asked for as
// it is, adopted and recorded as used, then left as it was with its record removed.
func TestAdoptedNeverRedefined(t *testing.T) {
	w, g := env(t), NewWithT(t)
	w.password(t, w.alice, tenantA, "legacy", "tenant-a-legacy-pw")
	svc := service(tenantA, "object-store", "tenant-a-legacy", "tenant-a-legacy", "legacy", "service")
	svc.Spec.ServiceDescription, svc.Spec.Enabled = "hers now", ptr.To(false)
	create(t, w.alice, svc)
	g.Expect(expectCondition(t, w.alice, svc, keystonev1.KeystoneServiceServiceReady, isFalse, "InvalidInput")).To(HavePrefix(
		`service object-store/tenant-a-legacy existed before and is not this owner's: it has description "Legacy objects", ` +
			`enabled true, where this spec says description "hers now", enabled false, and it is never changed here`))
	legacy := w.entity(t, "services", w.people.legacyID)
	g.Expect(legacy).To(HaveKeyWithValue("description", "Legacy objects"))
	g.Expect(legacy).To(HaveKeyWithValue("enabled", true))
	g.Expect(legacy[identity.OwnersAttribute]).To(BeNil(), "not on its record: it agrees with nothing")

	change(t, w.alice, svc, func(s *keystonev1.KeystoneService) {
		s.Spec.ServiceDescription, s.Spec.Enabled = "Legacy objects", ptr.To(true)
	})
	expectReady(t, w.alice, svc)
	g.Expect(svc.Status.ServiceID).To(Equal(w.people.legacyID), "adopted")
	g.Expect(w.entity(t, "services", w.people.legacyID)[identity.OwnersAttribute]).To(HaveKey(HavePrefix("KeystoneService/tenant-a/tenant-a-legacy/")))
	deleted(t, w.alice, svc)
	legacy = w.entity(t, "services", w.people.legacyID)
	g.Expect(legacy).NotTo(BeNil(), "adopted: it stays")
	g.Expect(legacy).To(HaveKeyWithValue(identity.OwnersAttribute, BeNil()), "its last owner of record gone, the record is removed")
	g.Expect(legacy).NotTo(HaveKey(identity.OwnerAttribute), "never marked")
}

// TestEndpointsOnlyUnderItsOwnServices (docs/security.md, KeystoneEndpoint): an endpoint
// under a service the namespace adopted (made by hand; the identity service, in bob's
// namespace, whose KeystoneAPI allows every name) is refused: no catalog lists it. Under
// a service her KeystoneService created, it is registered.
func TestEndpointsOnlyUnderItsOwnServices(t *testing.T) {
	w, g := env(t), NewWithT(t)
	w.password(t, w.alice, tenantA, "legacy", "tenant-a-legacy-pw")
	legacy := service(tenantA, "object-store", "tenant-a-legacy", "tenant-a-legacy", "legacy", "service")
	legacy.Spec.ServiceDescription = "Legacy objects"
	create(t, w.alice, legacy)
	expectReady(t, w.alice, legacy)
	planted := &keystonev1.KeystoneEndpoint{ObjectMeta: metav1.ObjectMeta{Namespace: tenantA, Name: "tenant-a-legacy"},
		Spec: keystonev1.KeystoneEndpointSpec{ServiceName: "tenant-a-legacy", Endpoints: map[string]string{"public": "http://attacker.example:8080"}}}
	create(t, w.alice, planted)
	g.Expect(expectCondition(t, w.alice, planted, keystonev1.KeystoneEndpointEndpointsReady, isFalse, "NotAllowed")).To(ContainSubstring(
		"existed in Keystone before KeystoneService tenant-a-legacy adopted it: endpoints go only under a service this namespace registered"))
	g.Expect(w.urls(t, w.people.legacyID)).To(BeEmpty())

	t.Log("bob, whose KeystoneAPI allows every name, adopts the identity service: no endpoint of his goes under it")
	identityBefore := w.catalogURLs(t, "carol", "carol-pw", "carol-project", "identity")
	w.password(t, w.bob, tenantB, "keystone", "tenant-b-keystone-pw")
	identitySvc := service(tenantB, "identity", "keystone", "tenant-b-keystone", "keystone")
	create(t, w.bob, identitySvc)
	expectReady(t, w.bob, identitySvc)
	identityEp := &keystonev1.KeystoneEndpoint{ObjectMeta: metav1.ObjectMeta{Namespace: tenantB, Name: "keystone"},
		Spec: keystonev1.KeystoneEndpointSpec{ServiceName: "keystone", Endpoints: map[string]string{"public": "http://attacker.example:5000"}}}
	create(t, w.bob, identityEp)
	expectCondition(t, w.bob, identityEp, keystonev1.KeystoneEndpointEndpointsReady, isFalse, "NotAllowed")
	g.Expect(w.catalogURLs(t, "carol", "carol-pw", "carol-project", "identity")).To(Equal(identityBefore),
		"carol's catalog: Keystone's own identity endpoints alone")
	g.Expect(w.urls(t, identitySvc.Status.ServiceID)).NotTo(ContainElement("http://attacker.example:5000"))

	t.Log("under a service her KeystoneService created: registered")
	w.password(t, w.alice, tenantA, "files", "tenant-a-files-pw")
	files := service(tenantA, "tenant-a-files", "tenant-a-files", "tenant-a-files", "files", "service")
	create(t, w.alice, files)
	expectReady(t, w.alice, files)
	filesEp := &keystonev1.KeystoneEndpoint{ObjectMeta: metav1.ObjectMeta{Namespace: tenantA, Name: "tenant-a-files"},
		Spec: keystonev1.KeystoneEndpointSpec{ServiceName: "tenant-a-files", Endpoints: map[string]string{"public": "https://files.tenant-a.example"}}}
	create(t, w.alice, filesEp)
	expectReady(t, w.alice, filesEp)
	g.Expect(w.urls(t, files.Status.ServiceID)).To(Equal([]string{"https://files.tenant-a.example"}))
	for c, objs := range map[client.Client][]client.Object{w.alice: {planted, filesEp, legacy, files}, w.bob: {identityEp, identitySvc}} {
		for _, obj := range objs {
			deleted(t, c, obj)
		}
	}
	g.Expect(w.entity(t, "services", w.people.legacyID)).NotTo(BeNil(), "the adopted services stay")
	g.Expect(w.entities(t, "services", "type=identity")).To(HaveLen(1))
	g.Expect(w.entities(t, "services", "type=tenant-a-files")).To(BeEmpty(), "hers: removed")
}

// TestOneServiceOfAType (docs/security.md, catalog types): a second service of the type
// image, where the admin's namespace registered glance, under a name her KeystoneAPI
// lets her use, and by bob, whose KeystoneAPI allows every name: refused, naming glance;
// Keystone's catalog keeps one image service. And a type clients take for volumev3
// (block-storage, its alias): refused, naming cinderv3.
func TestOneServiceOfAType(t *testing.T) {
	w, g := env(t), NewWithT(t)
	w.password(t, w.alice, tenantA, "evil", "tenant-a-evil-pw")
	w.password(t, w.bob, tenantB, "evil", "tenant-b-evil-pw")
	evil := service(tenantA, "image", "tenant-a-evil", "tenant-a-evil", "evil", "service")
	create(t, w.alice, evil)
	evilB := service(tenantB, "image", "glance-evil", "glance-evil", "evil")
	create(t, w.bob, evilB)
	for c, svc := range map[client.Client]*keystonev1.KeystoneService{w.alice: evil, w.bob: evilB} {
		g.Expect(expectCondition(t, c, svc, keystonev1.KeystoneServiceServiceReady, isFalse, "InvalidInput")).To(HavePrefix(
			"Keystone has a service of type image already: glance ("))
		touch(t, c, svc, 2)
	}
	g.Expect(names(w.entities(t, "services", "type=image"), "name")).To(Equal([]string{"glance"}))

	t.Log("a type clients take for another's: block-storage beside volumev3, load_balancer for load-balancer")
	w.password(t, w.alice, tenantA, "volume", "tenant-a-volume-pw")
	volume := service(tenantA, "block-storage", "tenant-a-volume", "tenant-a-volume", "volume", "service")
	create(t, w.alice, volume)
	g.Expect(expectCondition(t, w.alice, volume, keystonev1.KeystoneServiceServiceReady, isFalse, "InvalidInput")).To(HavePrefix(
		"Keystone has a service of type volumev3 (which clients take for block-storage) already: cinderv3 (" + w.people.cinderID))
	g.Expect(w.entities(t, "services", "type=block-storage")).To(BeEmpty())
	deleted(t, w.alice, volume)
	g.Expect(w.catalogURLs(t, "glance", "glance-pw", "service", "image")).To(Equal([]string{"http://glance-internal.openstack.svc:9292",
		"https://glance.example.com"}))
	deleted(t, w.alice, evil)
	deleted(t, w.bob, evilB)
}

// TestNoSquatting (docs/security.md, squatting): the tenant names glance's service and
// user, waiting for the admin's namespace to redeploy glance (deleted, created again):
// refused throughout, and glance comes back the admin's, with its own password.
func TestNoSquatting(t *testing.T) {
	w, g := env(t), NewWithT(t)
	w.password(t, w.alice, tenantA, "glance", "hers")
	squat := service(tenantA, "image", "glance", "glance", "glance", "service")
	create(t, w.alice, squat)
	expectCondition(t, w.alice, squat, keystonev1.KeystoneServiceInputReady, isFalse, "NotAllowed")

	t.Log("the admin's namespace redeploys glance")
	ctx := context.Background()
	for _, obj := range []client.Object{&keystonev1.KeystoneEndpoint{}, &keystonev1.KeystoneService{}} {
		obj.SetNamespace(victim)
		obj.SetName("glance")
		deleted(t, w.cluster, obj)
	}
	g.Expect(w.entities(t, "services", "type=image")).To(BeEmpty(), "glance's service gone with it")
	touch(t, w.alice, squat, 3)
	g.Expect(w.deployGlanceAgain(ctx)).To(Succeed())
	image := w.entities(t, "services", "type=image")
	g.Expect(image).To(HaveLen(1))
	g.Expect(image[0][identity.OwnerAttribute]).To(HavePrefix("KeystoneService/openstack/glance/"))
	glance := w.entities(t, "users", "name=glance")
	g.Expect(glance).To(HaveLen(1))
	g.Expect(glance[0][identity.OwnerAttribute]).To(HavePrefix("KeystoneService/openstack/glance/"))
	w.mustLogIn(t, "glance", "glance-pw")
	expectCondition(t, w.alice, squat, keystonev1.KeystoneServiceInputReady, isFalse, "NotAllowed")
	deleted(t, w.alice, squat)
}

// deployGlanceAgain is deployGlance once glance's objects are gone.
func (w *world) deployGlanceAgain(ctx context.Context) error { return w.deployGlance(ctx) }

// TestNamespaceRightsOnly (docs/security.md, status, the KeystoneAPI, other namespaces):
// what the tenant's RoleBinding does not grant is refused by the API server: the status
// the operator reads as proof (keystone-operator's conditions), her KeystoneAPI (its
// topologyRef, its registration policy, its deletion), the Secrets she writes (reading
// them), another namespace's objects, a certificate Secret the pods of another namespace
// mount.
func TestNamespaceRightsOnly(t *testing.T) {
	w, g := env(t), NewWithT(t)
	ctx := context.Background()
	w.password(t, w.alice, tenantA, "status", "tenant-a-status-pw")
	svc := service(tenantA, "tenant-a-status", "tenant-a-status", "tenant-a-status", "status", "service")
	create(t, w.alice, svc)
	expectReady(t, w.alice, svc)
	forbidden := func(err error, what string) {
		t.Helper()
		g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%s: %v", what, err)
	}
	svc.Status.Conditions.Set(svc.Status.Conditions.Get("Ready"))
	svc.Status.ServiceID = w.people.designateID
	forbidden(w.alice.Status().Update(ctx, svc), "writing the status (a forged service ID)")
	api := &keystonev1.KeystoneAPI{}
	g.Expect(w.alice.Get(ctx, types.NamespacedName{Namespace: tenantA, Name: "keystone"}, api)).To(Succeed(), "her KeystoneAPI, read")
	api.Spec.TopologyRef = &keystonev1.TopoRef{Name: "default", Namespace: victim}
	api.Spec.RegistrationPolicy.Roles = []string{"*"}
	forbidden(w.alice.Update(ctx, api), "editing her KeystoneAPI")
	forbidden(w.alice.Delete(ctx, api), "deleting her KeystoneAPI")
	forbidden(w.alice.Get(ctx, types.NamespacedName{Namespace: tenantA, Name: "keystone-admin"}, &corev1.Secret{}), "reading a Secret")
	forbidden(w.alice.Create(ctx, secret(victim, "osp-secret-2", map[string]string{"GlancePassword": "x"})), "another namespace's Secret")
	forbidden(w.alice.Create(ctx, service(victim, "image", "glance-2", "glance", "x")), "another namespace's KeystoneService")
	forbidden(w.alice.Patch(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: victim, Name: "osp-secret",
		Labels: map[string]string{"rotate": "now"}}}, client.Merge), "labelling another namespace's Secret")
	deleted(t, w.alice, svc)
}

// TestForgeriesClaimNothing (docs/security.md, keystone-operator's finalizer and the
// annotations): a KeystoneService with keystone-operator's finalizer, an earlier
// version's records naming glance and Keystone's admin, and orphan-on-delete, on a
// service made by hand: it adopts the service; its deletion (which lets both finalizers
// go, as this suite replaces keystone-operator) removes its own user while Keystone
// answers, and nothing else.
func TestForgeriesClaimNothing(t *testing.T) {
	w, g := env(t), NewWithT(t)
	w.password(t, w.alice, tenantA, "forged", "tenant-a-forged-pw")
	adminID := w.entities(t, "users", "name=admin")[0]["id"]
	glanceID := w.entities(t, "users", "name=glance")[0]["id"]
	forged := service(tenantA, "object-store", "tenant-a-legacy", "tenant-a-forged", "forged", "service")
	forged.Spec.ServiceDescription = "Legacy objects"
	forged.Finalizers = []string{"openstack.org/keystoneservice"}
	forged.Annotations = map[string]string{"keystone.openstack.org/service-user": "glance", "keystone.openstack.org/user-id": adminID.(string),
		"keystone.openstack.org/orphan-on-delete": "true"}
	create(t, w.alice, forged)
	expectReady(t, w.alice, forged)
	g.Expect(forged.Status.ServiceID).To(Equal(w.people.legacyID), "adopted, not claimed")
	g.Expect(w.entity(t, "services", w.people.legacyID)).NotTo(HaveKey(identity.OwnerAttribute))

	deleted(t, w.alice, forged)
	g.Expect(w.entities(t, "users", "name=tenant-a-forged")).To(BeEmpty(), "its own user removed: orphan-on-delete waits for Keystone to fail")
	g.Expect(w.entity(t, "users", adminID.(string))).NotTo(BeNil(), "the admin stays")
	g.Expect(w.entity(t, "users", glanceID.(string))).NotTo(BeNil(), "glance stays")
	g.Expect(w.entity(t, "services", w.people.legacyID)).NotTo(BeNil(), "the adopted service stays")
	w.mustLogIn(t, "glance", "glance-pw")
	w.mustLogIn(t, "admin", adminPassword)
}

// TestForgedCredentialSecret (docs/security.md, a credential Secret with any AC_ID, and
// a credential removed with its finalizer stripped): the tenant's credential Secret
// forged to name carol's credential: the clean-up revokes nobody's; her credential,
// deleted with its finalizer stripped, leaves no protected Secret, and carol's works.
func TestForgedCredentialSecret(t *testing.T) {
	w, g := env(t), NewWithT(t)
	ctx := context.Background()
	w.password(t, w.alice, tenantA, "ac", "tenant-a-ac-pw")
	svc := service(tenantA, "tenant-a-ac", "tenant-a-ac", "tenant-a-ac", "ac", "service")
	create(t, w.alice, svc)
	expectReady(t, w.alice, svc)
	ac := credential(tenantA, "tenant-a-ac", "tenant-a-ac", "ac")
	create(t, w.alice, ac)
	expectReady(t, w.alice, ac)
	yes := true
	forged := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: tenantA, Name: "tenant-a-ac-forged",
		Labels: map[string]string{keystonev1.ACSecretLabel: "true", keystonev1.ACServiceLabel: keystonev1.GetServiceNameFromACCR(ac.Name)},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: keystonev1.GroupVersion.String(), Kind: "KeystoneApplicationCredential",
			Name: ac.Name, UID: ac.UID, Controller: &yes}}},
		StringData: map[string]string{keystonev1.ACIDSecretKey: w.people.carolCredID, keystonev1.ACSecretSecretKey: "x"}}
	create(t, w.alice, forged)
	touch(t, w.alice, ac, 2)
	g.Eventually(func() bool {
		return apierrors.IsNotFound(w.cluster.Get(ctx, client.ObjectKeyFromObject(forged), &corev1.Secret{}))
	}, within, poll).Should(BeTrue(), "the forged Secret is cleaned up")
	g.Expect(keystoneadmin.AppCredLogin(ctx, w.url, w.ca, w.people.carolCredID, w.people.carolCredSecret)).To(Succeed(),
		"carol's credential still works")

	t.Log("her credential removed with its finalizer stripped (by an admin: step 6 refuses her), so that its deletion " +
		"never runs: its Secrets keep no protection, and nobody else's credential is touched")
	secretName := ac.Status.SecretName
	g.Expect(w.cluster.Patch(ctx, &keystonev1.KeystoneApplicationCredential{ObjectMeta: metav1.ObjectMeta{
		Namespace: tenantA, Name: ac.Name}}, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))).To(Succeed())
	g.Expect(w.alice.Delete(ctx, ac)).To(Succeed())
	g.Eventually(func() bool { return apierrors.IsNotFound(w.alice.Get(ctx, client.ObjectKeyFromObject(ac), ac)) }, within, poll).Should(BeTrue())
	g.Eventually(func() []string {
		s := &corev1.Secret{}
		if err := w.cluster.Get(ctx, types.NamespacedName{Namespace: tenantA, Name: secretName}, s); err != nil {
			return nil
		}
		return s.Finalizers
	}, within, poll).ShouldNot(ContainElement(ContainSubstring("ac-secret-protection")))
	g.Expect(keystoneadmin.AppCredLogin(ctx, w.url, w.ca, w.people.carolCredID, w.people.carolCredSecret)).To(Succeed())
	deleted(t, w.alice, svc)
}

// TestOtherClusters (docs/security.md, other namespaces and other clusters): nova, which
// another cluster's openstack namespace registered, named by bob, whose KeystoneAPI
// allows every name: refused, naming its owner; its service and user as they were.
func TestOtherClusters(t *testing.T) {
	w, g := env(t), NewWithT(t)
	w.password(t, w.bob, tenantB, "nova", "bobs-guess")
	nova := service(tenantB, "compute", "nova", "nova", "nova")
	create(t, w.bob, nova)
	g.Expect(expectCondition(t, w.bob, nova, keystonev1.KeystoneServiceServiceReady, isFalse, "InvalidInput")).To(HavePrefix(
		"service compute/nova is registered by KeystoneService/openstack/nova of the cluster " + elsewhere))
	touch(t, w.bob, nova, 2)
	g.Expect(w.entity(t, "services", w.people.novaServiceID)).To(HaveKeyWithValue(identity.OwnerAttribute,
		"KeystoneService/openstack/nova/uid-nova@"+elsewhere))
	g.Expect(w.entity(t, "services", w.people.novaServiceID)[identity.OwnersAttribute]).To(BeNil())
	w.mustLogIn(t, "nova", "nova-pw")
	deleted(t, w.bob, nova)
	g.Expect(w.entity(t, "services", w.people.novaServiceID)).NotTo(BeNil())
	g.Expect(w.entity(t, "users", w.people.novaUserID)).NotTo(BeNil())
}

// TestNarrowedClaimsNothingOutside (docs/security.md, a namespace narrowed after
// keystone-operator): keystone-operator registered, for objects of tenant-a, the service
// designate and its endpoint, which it found and used (it takes a service of the type
// and name asked for, and any endpoint of the service's interface in the region:
// lib-common's CreateEndpoint), recording their IDs in its proofs and statuses as it
// records what it creates. The namespace was then handed to alice by the recipe, which
// does not let it name designate. Neither her change of a KeystoneService to a name of
// her own (whose round removes the service it had) nor her deletion of a
// KeystoneService and its KeystoneEndpoint removes or rewrites designate or its
// endpoint: a proof claims only what the KeystoneAPI lets the namespace name now, and a
// recorded endpoint only under a service the namespace registered.
func TestNarrowedClaimsNothingOutside(t *testing.T) {
	w, g := env(t), NewWithT(t)
	ctx := context.Background()
	designate := w.entities(t, "endpoints", "service_id="+w.people.designateID)
	g.Expect(designate).To(HaveLen(1))
	designateEndpoint := designate[0]["id"].(string)
	w.password(t, w.alice, tenantA, "sleeper", "tenant-a-sleeper-pw")

	t.Log("what keystone-operator left, laid out with the operator stopped, as at the switch")
	stop := w.operator
	w.operator = func() {} // until the new one runs: the suite's stop must not wait for the old one again
	stop()
	api := &keystonev1.KeystoneAPI{}
	g.Expect(w.cluster.Get(ctx, types.NamespacedName{Namespace: tenantA, Name: "keystone"}, api)).To(Succeed())
	var pairs [2]struct {
		svc *keystonev1.KeystoneService
		ep  *keystonev1.KeystoneEndpoint
	}
	for i := range pairs {
		name := fmt.Sprintf("sleeper-%d", i+1)
		svc := service(tenantA, "dns", "designate", "tenant-a-sleeper", "sleeper", "service")
		svc.Name, svc.Spec.ServiceDescription = name, "Designate DNS"
		svc.Finalizers = []string{"openstack.org/keystoneservice", "openstack.org/keystoneendpoint-" + name}
		ep := &keystonev1.KeystoneEndpoint{ObjectMeta: metav1.ObjectMeta{Namespace: tenantA, Name: name,
			Finalizers: []string{"openstack.org/keystoneendpoint"}},
			Spec: keystonev1.KeystoneEndpointSpec{ServiceName: name, Endpoints: map[string]string{"public": "https://dns.example.com"}}}
		create(t, w.cluster, svc)
		create(t, w.cluster, ep)
		svc.Status = upstream.ServiceStatus(svc, w.people.designateID)
		g.Expect(w.cluster.Status().Update(ctx, svc)).To(Succeed())
		ep.Status = upstream.EndpointStatus(ep, w.people.designateID, map[string]string{"public": designateEndpoint})
		g.Expect(w.cluster.Status().Update(ctx, ep)).To(Succeed())
		api.Finalizers = append(api.Finalizers, "openstack.org/keystoneservice-"+name, "openstack.org/keystoneendpoint-"+name)
		pairs[i].svc, pairs[i].ep = svc, ep
	}
	g.Expect(w.cluster.Update(ctx, api)).To(Succeed())
	if err := w.startOperator(); err != nil {
		t.Fatalf("starting the operator again: %v", err)
	}
	for _, p := range pairs {
		g.Expect(expectCondition(t, w.alice, p.svc, keystonev1.KeystoneServiceInputReady, isFalse, "NotAllowed")).To(ContainSubstring(
			"dns/designate is not among the services KeystoneAPI keystone allows"))
	}
	unchanged := func(when string) {
		t.Helper()
		svc := w.entity(t, "services", w.people.designateID)
		g.Expect(svc).NotTo(BeNil(), "designate stays %s", when)
		g.Expect(svc).NotTo(HaveKey(identity.OwnerAttribute), "never claimed %s", when)
		g.Expect(w.urls(t, w.people.designateID)).To(Equal([]string{"https://dns.example.com"}), "its endpoint as it was %s", when)
		g.Expect(w.entity(t, "endpoints", designateEndpoint)).NotTo(HaveKey(identity.OwnerAttribute))
	}

	t.Log("alice moves sleeper-1 to a name of her own: its round removes the service it had, if the namespace's")
	first := pairs[0]
	change(t, w.alice, first.svc, func(s *keystonev1.KeystoneService) {
		s.Spec.ServiceType, s.Spec.ServiceName = "tenant-a-sleeper", "tenant-a-sleeper"
	})
	change(t, w.alice, first.ep, func(e *keystonev1.KeystoneEndpoint) {
		e.Spec.Endpoints = map[string]string{"public": "https://tenant-a-sleeper.example.com"}
	})
	expectReady(t, w.alice, first.svc)
	expectReady(t, w.alice, first.ep)
	g.Expect(first.ep.Status.ServiceID).To(Equal(first.svc.Status.ServiceID))
	g.Expect(w.urls(t, first.svc.Status.ServiceID)).To(Equal([]string{"https://tenant-a-sleeper.example.com"}),
		"hers, under her service")
	unchanged("after the move")

	t.Log("alice deletes sleeper-2's KeystoneEndpoint and KeystoneService, and sleeper-1's")
	for _, p := range []struct {
		svc *keystonev1.KeystoneService
		ep  *keystonev1.KeystoneEndpoint
	}{pairs[1], first} {
		deleted(t, w.alice, p.ep)
		deleted(t, w.alice, p.svc)
	}
	unchanged("after the deletions")
	g.Expect(w.entities(t, "services", "type=tenant-a-sleeper")).To(BeEmpty(), "her own service goes")
	g.Expect(w.entities(t, "users", "name=tenant-a-sleeper")).To(BeEmpty(), "and her user")
	g.Expect(w.cluster.Get(ctx, client.ObjectKeyFromObject(api), api)).To(Succeed())
	g.Expect(api.Finalizers).NotTo(ContainElement(ContainSubstring("sleeper")), "keystone-operator's finalizers released")
}

// TestOverlappingPoliciesLockNobodyOut (docs/security.md, policies that overlap):
// tenant-a's policy allows tenant-a-*, which also names other namespaces' users: the
// KeystoneAPI of a namespace tenant-a-2 acts as tenant-a-2-operator, and the admin's
// namespace registers tenant-a-shared for a KeystoneService of its own. Alice names both,
// with a password she changes more often than Keystone's lockout allows refusals: the
// other namespace's admin user is refused at InputReady (a KeystoneService's and a
// credential's), the other namespace's service user at the credential's look-up before
// its login; no password is tried, and both still log in.
func TestOverlappingPoliciesLockNobodyOut(t *testing.T) {
	w, g := env(t), NewWithT(t)
	ctx := context.Background()
	const other, otherAdmin = "tenant-a-2", "tenant-a-2-operator"
	adminProject, err := projectID(ctx, w.admin, "admin")
	g.Expect(err).NotTo(HaveOccurred())
	adminRole, err := roleID(ctx, w.admin, "admin")
	g.Expect(err).NotTo(HaveOccurred())
	_, err = w.newUser(ctx, otherAdmin, "tenant-a-2-operator-pw", adminProject, adminRole, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(w.makeNamespace(ctx, other, otherAdmin, "tenant-a-2-operator-pw", nil, false)).To(Succeed())
	otherAPI := &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "keystone"}}
	expectReady(t, w.cluster, otherAPI)
	t.Cleanup(func() { _ = w.cluster.Delete(context.Background(), otherAPI) })
	w.password(t, w.cluster, victim, "shared", "tenant-a-shared-pw")
	shared := service(victim, "tenant-a-shared", "tenant-a-shared", "tenant-a-shared", "shared", "service")
	create(t, w.cluster, shared)
	expectReady(t, w.cluster, shared)

	w.password(t, w.alice, tenantA, "overlap", "guess-0")
	adminCredential := credential(tenantA, "ac-other-admin", otherAdmin, "overlap")
	adminService := service(tenantA, "tenant-a-other-admin", "tenant-a-other-admin", otherAdmin, "overlap", "service")
	sharedCredential := credential(tenantA, "ac-shared", "tenant-a-shared", "overlap")
	for _, obj := range []client.Object{adminCredential, adminService, sharedCredential} {
		create(t, w.alice, obj)
	}
	const refusal = "tenant-a-2-operator is the admin user of another namespace's KeystoneAPI, as which the operator acts for that namespace"
	g.Expect(expectCondition(t, w.alice, adminCredential, keystonev1.KeystoneApplicationCredentialInputReady, isFalse,
		"NotAllowed")).To(ContainSubstring(refusal))
	g.Expect(expectCondition(t, w.alice, adminService, keystonev1.KeystoneServiceInputReady, isFalse,
		"NotAllowed")).To(ContainSubstring(refusal))
	g.Expect(expectCondition(t, w.alice, sharedCredential, keystonev1.KeystoneApplicationCredentialCredentialReady, isFalse,
		"InvalidInput")).To(ContainSubstring("user tenant-a-shared is registered by KeystoneService/openstack/tenant-a-shared"))

	t.Log("tenant-a-2's KeystoneAPI not Ready (its Keystone unreachable at the URL it names now): its admin, " +
		"by the ID it recorded, is still refused, before any password is tried")
	g.Expect(w.cluster.Get(ctx, client.ObjectKeyFromObject(otherAPI), otherAPI)).To(Succeed())
	g.Expect(otherAPI.Status.VerifiedAdmin).NotTo(BeNil(), "recorded once its login worked")
	g.Expect(otherAPI.Status.VerifiedAdmin.Endpoint).To(Equal(w.url))
	change(t, w.cluster, otherAPI, func(a *keystonev1.KeystoneAPI) {
		a.Spec.Override.Service.Internal.EndpointURL = ptr.To("https://127.0.0.1:9")
	})
	expectCondition(t, w.cluster, otherAPI, keystonev1.KeystoneAPIEndpointReady, isFalse, "ServiceUnavailable")
	laterCredential := credential(tenantA, "ac-other-admin-later", otherAdmin, "overlap")
	laterService := service(tenantA, "tenant-a-other-admin-later", "tenant-a-other-admin-later", otherAdmin, "overlap", "service")
	for _, obj := range []client.Object{laterCredential, laterService} {
		create(t, w.alice, obj)
	}
	g.Expect(expectCondition(t, w.alice, laterCredential, keystonev1.KeystoneApplicationCredentialCredentialReady, isFalse,
		"NotAllowed")).To(ContainSubstring("user tenant-a-2-operator is the admin user of another namespace's KeystoneAPI"))
	g.Expect(expectCondition(t, w.alice, laterService, keystonev1.KeystoneServiceUserReady, isFalse,
		"NotAllowed")).To(ContainSubstring("user tenant-a-2-operator is the admin user of another namespace's KeystoneAPI"))
	for i := 1; i <= 3; i++ {
		w.password(t, w.alice, tenantA, "overlap", fmt.Sprintf("guess-%d", i))
		touch(t, w.alice, adminService, 1)
		touch(t, w.alice, laterService, 1)
	}
	w.mustLogIn(t, otherAdmin, "tenant-a-2-operator-pw")
	w.mustLogIn(t, "tenant-a-shared", "tenant-a-shared-pw")
	for _, obj := range []client.Object{adminCredential, adminService, sharedCredential, laterCredential, laterService} {
		deleted(t, w.alice, obj)
	}
	deleted(t, w.cluster, shared)
}
