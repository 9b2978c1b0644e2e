package identity_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/tests/support/fakekeystone"
	. "github.com/onsi/gomega"
)

// adminOfFake starts a fake Keystone (closed with t) and returns it, the clients and
// the admin's client.
func adminOfFake(t *testing.T) (*fakekeystone.Server, *identity.Clients, *identity.Client) {
	t.Helper()
	keystone := fakekeystone.New("admin", "secret")
	t.Cleanup(keystone.Close)
	clients := &identity.Clients{Transport: &http.Transport{}}
	kc, err := clients.Get(context.Background(), identity.Credentials{URL: keystone.URL, User: "admin", Password: "secret",
		Project: "admin", Domain: "Default"})
	if err != nil {
		t.Fatal(err)
	}
	return keystone, clients, kc
}

// TestSharedUser: a user marked by another KeystoneService the caller shares it with
// is used, its password checked and never set; a password it refuses is a conflict;
// a taken-over user becomes the caller's; a hand-over moves the mark only from its owner.
func TestSharedUser(t *testing.T) {
	g := NewWithT(t)
	keystone, _, kc := adminOfFake(t)
	ctx := context.Background()

	const heat, cfn = "KeystoneService/openstack/heat/u1@c1", "KeystoneService/openstack/heat-cfn/u2@c1"
	want := identity.UserSpec{Name: "heat", DomainID: "default", Password: "pw", PasswordFrom: "secret-uid/1#HeatPassword", Owner: heat}
	created, changed, err := kc.EnsureUser(ctx, want)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeTrue())

	t.Log("another KeystoneService that does not share it is refused")
	other := want
	other.Owner = cfn
	_, _, err = kc.EnsureUser(ctx, other)
	var foreign *identity.ForeignError
	g.Expect(errors.As(err, &foreign)).To(BeTrue(), "%v", err)
	g.Expect(foreign.Owner).To(Equal(heat))

	t.Log("shared, from the same Secret version: no request beyond the lookup")
	other.Sharing = sharesWith(heat, false)
	auths := keystone.Authentications.Load()
	reg, changed, err := kc.EnsureUser(ctx, other)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeFalse())
	g.Expect(reg).To(Equal(identity.Registered{ID: created.ID, Ownership: identity.Shared, Keeper: heat}))
	g.Expect(keystone.Authentications.Load()).To(Equal(auths), "the password was not checked")

	t.Log("shared, from another key holding the same password: checked, not set")
	other.PasswordFrom = "secret-uid/1#HeatCfnPassword"
	reg, changed, err = kc.EnsureUser(ctx, other)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeFalse())
	g.Expect(reg.Ownership).To(Equal(identity.Shared))
	g.Expect(keystone.Authentications.Load()).To(Equal(auths+1), "one token for the check")
	g.Expect(keystone.List(fakekeystone.Users, map[string]any{"name": "heat"})[0]).To(HaveKeyWithValue(identity.PasswordFromAttribute, "secret-uid/1#HeatPassword"))

	t.Log("shared, with another password: a conflict, and the password stays")
	other.Password = "other-pw"
	_, changed, err = kc.EnsureUser(ctx, other)
	var conflict *identity.PasswordConflictError
	g.Expect(errors.As(err, &conflict)).To(BeTrue(), "%v", err)
	g.Expect(changed).To(BeFalse())
	g.Expect(conflict.Error()).To(Equal("user heat has a password set by KeystoneService/openstack/heat, and it is not this one"))
	g.Expect(keystone.Authentications.Load()).To(Equal(auths+1), "a refused check neither counts nor re-authenticates the admin")
	g.Expect(kc.PasswordWorks(ctx, created.ID, "pw")).To(BeTrue(), "the keeper's password stays")
	_, err = kc.FindUserID(ctx, "default", "heat")
	g.Expect(err).NotTo(HaveOccurred(), "the admin's session still works")

	t.Log("a hand-over from a KeystoneService that is not the keeper moves nothing")
	moved, err := kc.HandOverUser(ctx, "default", "heat", cfn, false, "KeystoneService/openstack/heat-x/u3@c1")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(moved).To(BeFalse())

	t.Log("the keeper hands it over: the other is its keeper, and sets its password from then on")
	moved, err = kc.HandOverUser(ctx, "default", "heat", heat, false, cfn)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(moved).To(BeTrue())
	reg, changed, err = kc.EnsureUser(ctx, other)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeTrue())
	g.Expect(reg.Ownership).To(Equal(identity.Owned))
	g.Expect(kc.PasswordWorks(ctx, created.ID, "other-pw")).To(BeTrue(), "the new keeper's password")

	t.Log("a keeper gone without a hand-over: taken over, marked and its password set")
	gone := identity.UserSpec{Name: "heat", DomainID: "default", Password: "pw3", PasswordFrom: "s3/1",
		Owner: "KeystoneService/openstack/heat-y/u4@c1", Sharing: sharesWith(cfn, true)}
	reg, changed, err = kc.EnsureUser(ctx, gone)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeTrue())
	g.Expect(reg.Ownership).To(Equal(identity.Owned))
	u := keystone.List(fakekeystone.Users, map[string]any{"name": "heat"})[0]
	g.Expect(u).To(HaveKeyWithValue(identity.OwnerAttribute, gone.Owner))
	g.Expect(kc.PasswordWorks(ctx, created.ID, "pw3")).To(BeTrue())

	t.Log("Sharing is asked about the mark the user carries, and says no to another")
	stranger := identity.UserSpec{Name: "heat", DomainID: "default", Password: "pw3", Owner: "KeystoneService/other/heat/u5@c1",
		Sharing: sharesWith(heat, false)}
	_, _, err = kc.EnsureUser(ctx, stranger)
	g.Expect(errors.As(err, &foreign)).To(BeTrue(), "%v", err)
}

// sharesWith is a UserSpec.Sharing that shares (or, takeOver, takes over) a user marked
// by mark, and no other.
func sharesWith(mark string, takeOver bool) func(context.Context, string) (bool, bool, error) {
	return func(_ context.Context, m string) (bool, bool, error) {
		return m == mark && !takeOver, m == mark && takeOver, nil
	}
}

func TestSameSource(t *testing.T) {
	g := NewWithT(t)
	g.Expect(identity.SameSource("s/1#HeatPassword", "s/1#HeatPassword")).To(BeTrue())
	g.Expect(identity.SameSource("s/1", "s/1#HeatPassword")).To(BeTrue(), "an earlier version's record: no password set again at an upgrade")
	g.Expect(identity.SameSource("s/1#HeatPassword", "s/1#HeatCfnPassword")).To(BeFalse(), "another key")
	g.Expect(identity.SameSource("s/1#HeatPassword", "s/2#HeatPassword")).To(BeFalse(), "another version")
	g.Expect(identity.SameSource("", "s/1#HeatPassword")).To(BeFalse())
}

func TestParseMark(t *testing.T) {
	g := NewWithT(t)
	m, ok := identity.ParseMark("KeystoneService/openstack/heat/u1@c1")
	g.Expect(ok).To(BeTrue())
	g.Expect(m).To(Equal(identity.Mark{Kind: "KeystoneService", Namespace: "openstack", Name: "heat", UID: "u1", Cluster: "c1"}))
	m, ok = identity.ParseMark("KeystoneService/openstack/heat/u1")
	g.Expect(ok).To(BeTrue())
	g.Expect(m.Cluster).To(BeEmpty())
	for _, bad := range []string{"", "heat", "KeystoneService/openstack/heat", "KeystoneService/openstack/heat/", "a/b/c/d/e"} {
		_, ok := identity.ParseMark(bad)
		g.Expect(ok).To(BeFalse(), bad)
	}
	g.Expect(identity.OwnerName("KeystoneService/openstack/heat/u1@c1")).To(Equal("KeystoneService heat"))
}

// TestRemarkKeepsPassword: a user marked by an earlier version (no cluster in the mark)
// gets the cluster added to its mark at an upgrade, and its password, set from the same
// Secret version, is not sent again.
func TestRemarkKeepsPassword(t *testing.T) {
	g := NewWithT(t)
	keystone, clients, kc := adminOfFake(t)
	ctx := context.Background()
	keystone.Create(fakekeystone.Users, map[string]any{"name": "glance", "domain_id": "default", "password": "set-by-the-earlier-version",
		identity.OwnerAttribute: "KeystoneService/openstack/glance/u1", identity.PasswordFromAttribute: "secret-uid/1#GlancePassword"})
	want := identity.UserSpec{Name: "glance", DomainID: "default", Password: "pw", PasswordFrom: "secret-uid/1#GlancePassword",
		Owner: "KeystoneService/openstack/glance/u1@c1"}
	reg, changed, err := kc.EnsureUser(ctx, want)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeTrue(), "the mark was written")
	g.Expect(reg.Ownership).To(Equal(identity.Owned))
	user := keystone.List(fakekeystone.Users, map[string]any{"name": "glance"})[0]
	g.Expect(user).To(HaveKeyWithValue(identity.OwnerAttribute, want.Owner))
	_, err = clients.Get(ctx, identity.Credentials{URL: keystone.URL, User: "glance", Password: "set-by-the-earlier-version",
		Project: "admin", Domain: "Default"})
	g.Expect(err).NotTo(HaveOccurred(), "the password was not sent again")
}

// TestUnclusteredPredecessor: a user an object of the same name left with an earlier
// version's mark (no cluster) is refused, saying how to take it over, unless the
// operator claims such marks (--claim-unclustered-marks); then it is marked as the new
// object's, with its cluster.
func TestUnclusteredPredecessor(t *testing.T) {
	g := NewWithT(t)
	keystone := fakekeystone.New("admin", "secret")
	defer keystone.Close()
	ctx := context.Background()
	admin := identity.Credentials{URL: keystone.URL, User: "admin", Password: "secret", Project: "admin", Domain: "Default"}
	keystone.Create(fakekeystone.Users, map[string]any{"name": "glance", "domain_id": "default",
		identity.OwnerAttribute: "KeystoneService/openstack/glance/u1"})
	want := identity.UserSpec{Name: "glance", DomainID: "default", Password: "pw", PasswordFrom: "s/1#GlancePassword",
		Owner: "KeystoneService/openstack/glance/u2@c1"}

	kc, err := (&identity.Clients{Transport: &http.Transport{}}).Get(ctx, admin)
	g.Expect(err).NotTo(HaveOccurred())
	_, _, err = kc.EnsureUser(ctx, want)
	var foreign *identity.ForeignError
	g.Expect(errors.As(err, &foreign)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(ContainSubstring("--claim-unclustered-marks"))

	kc, err = (&identity.Clients{Transport: &http.Transport{}, ClaimUnclustered: true}).Get(ctx, admin)
	g.Expect(err).NotTo(HaveOccurred())
	reg, _, err := kc.EnsureUser(ctx, want)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(reg.Ownership).To(Equal(identity.Owned))
	g.Expect(keystone.List(fakekeystone.Users, map[string]any{"name": "glance"})[0]).To(HaveKeyWithValue(identity.OwnerAttribute, want.Owner))
}

// TestDeleteRegistrationClaimsByName: keystone-operator's proof claims the user it names
// alone. A user ID from elsewhere (an earlier version's annotation, which a tenant can
// write) naming another unmarked user, the admin among them, deletes nothing of it.
func TestDeleteRegistrationClaimsByName(t *testing.T) {
	g := NewWithT(t)
	keystone, _, kc := adminOfFake(t)
	ctx := context.Background()
	admins := keystone.List(fakekeystone.Users, map[string]any{"name": "admin"})
	g.Expect(admins).To(HaveLen(1))
	keystone.Create(fakekeystone.Users, map[string]any{"name": "glance", "domain_id": "default", "password": "g"})
	owner := "KeystoneService/openstack/glance/uid-1@cluster"
	err := kc.DeleteRegistration(ctx, "", identity.ServiceSpec{Type: "image", Name: "glance", Owner: owner},
		admins[0]["id"].(string), identity.UserSpec{Name: "glance", DomainID: "default", Owner: owner, ClaimUnmarked: true})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(keystone.List(fakekeystone.Users, map[string]any{"name": "admin"})).To(HaveLen(1), "the admin stays")
	g.Expect(keystone.List(fakekeystone.Users, map[string]any{"name": "glance"})).To(BeEmpty(), "the user the proof names goes")

	// A user that is neither the admin nor the one named (an unmarked user of another
	// namespace, its ID in the forged annotation): the claim is for the name alone.
	keystone.Create(fakekeystone.Users, map[string]any{"name": "glance", "domain_id": "default", "password": "g"})
	carol := keystone.Create(fakekeystone.Users, map[string]any{"name": "carol", "domain_id": "default", "password": "c"})
	err = kc.DeleteRegistration(ctx, "", identity.ServiceSpec{Type: "image", Name: "glance", Owner: owner},
		carol, identity.UserSpec{Name: "glance", DomainID: "default", Owner: owner, ClaimUnmarked: true})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(keystone.List(fakekeystone.Users, map[string]any{"name": "carol"})).To(HaveLen(1), "the user of the forged ID stays")
	g.Expect(keystone.List(fakekeystone.Users, map[string]any{"name": "glance"})).To(BeEmpty(), "the user the proof names goes")
}

// claimAny claims every unmarked service it is asked about (identity.ServiceClaim).
func claimAny(*identity.Service) bool { return true }

// TestServiceClaimJudgesTheServiceAsKeystoneHasIt (docs/security.md, a narrowed
// KeystoneAPI): keystone-operator's proof names a service's ID, which it wrote for a
// service it found and used too (Keystone's own identity service). The claim is judged
// on the service read by that ID, in a deletion by the known ID, a deletion of another,
// and a look-up: one it refuses is neither deleted nor marked.
func TestServiceClaimJudgesTheServiceAsKeystoneHasIt(t *testing.T) {
	g := NewWithT(t)
	keystone, _, kc := adminOfFake(t)
	ctx := context.Background()
	identityID := keystone.Create(fakekeystone.Services, map[string]any{"type": "identity", "name": "keystone", "enabled": true})
	endpoint := keystone.Create(fakekeystone.Endpoints, map[string]any{"service_id": identityID, "interface": "public",
		"url": "http://keystone:5000", "region_id": "regionOne"})
	owner := "KeystoneService/tenant-a/sleeper/uid-1@cluster"
	var asked []string
	onlyImage := func(svc *identity.Service) bool {
		asked = append(asked, svc.ID+" "+svc.Type+"/"+svc.Name)
		return svc.Type == "image"
	}
	err := kc.DeleteRegistration(ctx, identityID, identity.ServiceSpec{Type: "identity", Name: "keystone", Owner: owner,
		Claim: onlyImage}, "", identity.UserSpec{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(kc.DeleteService(ctx, identityID, owner, onlyImage)).To(Succeed())
	_, _, err = kc.EnsureService(ctx, identityID, identity.ServiceSpec{Type: "identity", Name: "keystone", Owner: owner,
		Enabled: true, Claim: onlyImage})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(asked).To(ConsistOf(Equal(identityID+" identity/keystone"), Equal(identityID+" identity/keystone"),
		Equal(identityID+" identity/keystone")), "asked about the service as Keystone has it, each time")
	services := keystone.List(fakekeystone.Services, map[string]any{"id": identityID})
	g.Expect(services).To(HaveLen(1), "Keystone's identity service stays")
	g.Expect(services[0]).NotTo(HaveKey(identity.OwnerAttribute), "never marked")
	g.Expect(keystone.List(fakekeystone.Endpoints, map[string]any{"id": endpoint})).To(HaveLen(1), "and its endpoints")

	t.Log("the same calls with a claim that allows it: claimed and deleted")
	g.Expect(kc.DeleteService(ctx, identityID, owner, claimAny)).To(Succeed())
	g.Expect(keystone.List(fakekeystone.Services, map[string]any{"id": identityID})).To(BeEmpty())
}

// TestKnownEndpointMarkedByAnotherIsNotTaken (docs/security.md, a namespace narrowed
// after keystone-operator): an endpoint ID recorded by keystone-operator
// (EndpointSet.Known) is the owner's while it carries no mark; one another owner's mark
// is on (created so: an ID of its own a status recorded), that owner's, neither
// rewritten nor removed, and the owner's own is made beside it.
func TestKnownEndpointMarkedByAnotherIsNotTaken(t *testing.T) {
	g := NewWithT(t)
	keystone, _, kc := adminOfFake(t)
	ctx := context.Background()
	service := keystone.Create(fakekeystone.Services, map[string]any{"type": "image", "name": "glance", "enabled": true})
	other := "KeystoneEndpoint/openstack/glance/uid-2@cluster"
	theirs := keystone.Create(fakekeystone.Endpoints, map[string]any{"service_id": service, "interface": "public",
		"url": "http://theirs:9292", "region_id": "regionOne", identity.OwnerAttribute: other})
	unmarked := keystone.Create(fakekeystone.Endpoints, map[string]any{"service_id": service, "interface": "internal",
		"url": "http://old:9292", "region_id": "regionOne"})
	want := identity.EndpointSet{ServiceID: service, Region: "regionOne", Owner: "KeystoneEndpoint/tenant-a/glance/uid-1@cluster",
		URLs:  map[string]string{"public": "http://mine:9292", "internal": "http://mine-internal:9292"},
		Known: map[string]string{"public": theirs, "internal": unmarked}}
	ids, _, err := kc.EnsureEndpoints(ctx, want)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ids["internal"]).To(Equal(unmarked), "the unmarked one recorded is taken")
	g.Expect(ids["public"]).NotTo(Equal(theirs), "another's is not")
	g.Expect(keystone.List(fakekeystone.Endpoints, map[string]any{"id": theirs})).To(ConsistOf(
		HaveKeyWithValue("url", "http://theirs:9292")), "never rewritten")
	g.Expect(kc.DeleteEndpoints(ctx, want)).To(Succeed())
	g.Expect(keystone.List(fakekeystone.Endpoints, map[string]any{"service_id": service})).To(ConsistOf(
		HaveKeyWithValue("id", theirs)), "never removed; the owner's went")
}

// TestEndpointNeverBesideAnother: under a service another registered
// (EndpointSet.Alone), no endpoint goes beside one of its interface in the region that
// is not the owner's (unmarked or another's): refused before any write, so no other
// interface is created either; in another region, and once the other is gone, it goes.
func TestEndpointNeverBesideAnother(t *testing.T) {
	g := NewWithT(t)
	keystone, _, kc := adminOfFake(t)
	ctx := context.Background()
	service := keystone.Create(fakekeystone.Services, map[string]any{"type": "placement", "name": "placement", "enabled": true})
	byHand := keystone.Create(fakekeystone.Endpoints, map[string]any{"service_id": service, "interface": "public",
		"url": "http://by-hand:8778", "region_id": "regionTwo"})
	want := identity.EndpointSet{ServiceID: service, Region: "regionTwo", Owner: "KeystoneEndpoint/openstack/placement/uid-1@c2",
		URLs: map[string]string{"public": "http://mine:8778", "internal": "http://mine-internal:8778"}, Alone: true}
	_, _, err := kc.EnsureEndpoints(ctx, want)
	var beside *identity.EndpointBesideError
	g.Expect(errors.As(err, &beside)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(Equal("the service has a public endpoint in regionTwo already (" + byHand +
		", http://by-hand:8778; no mark), which is never rewritten: a second would leave clients to take either; " +
		"remove it, or list this one there yourself"))
	g.Expect(keystone.List(fakekeystone.Endpoints, map[string]any{"service_id": service})).To(ConsistOf(
		HaveKeyWithValue("id", byHand)), "nothing created, the internal one neither; the other untouched")

	// In another region: created.
	other := want
	other.Region = "regionThree"
	_, _, err = kc.EnsureEndpoints(ctx, other)
	g.Expect(err).NotTo(HaveOccurred())
	// The other removed: created.
	keystone.Delete(fakekeystone.Endpoints, byHand)
	ids, _, err := kc.EnsureEndpoints(ctx, want)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ids).To(HaveLen(2))
	// Its own found again: no refusal from another region's or its own.
	_, _, err = kc.EnsureEndpoints(ctx, want)
	g.Expect(err).NotTo(HaveOccurred())
}

// TestOtherNamespaceUser (docs/security.md, policies that overlap): a user an object of
// namespace tenant-a would log in as is refused when another namespace registered it, or,
// unmarked, only other namespaces use it; a region's same namespace is this one.
func TestOtherNamespaceUser(t *testing.T) {
	g := NewWithT(t)
	const ns = "tenant-a"
	cases := []struct {
		name    string
		user    identity.User
		refused string
	}{
		{"marked by this namespace", identity.User{Owner: "KeystoneService/tenant-a/glance/u1@c1"}, ""},
		{"marked by this namespace of another cluster", identity.User{Owner: "KeystoneService/tenant-a/glance/u9@c2"}, ""},
		{"marked by another namespace", identity.User{Owner: "KeystoneService/openstack/glance/u2@c1"},
			"user glance is registered by KeystoneService/openstack/glance of the cluster c1"},
		{"a mark of no form of this suite's", identity.User{Owner: "someone"}, "user glance is registered by someone"},
		{"unmarked, used by nobody", identity.User{}, ""},
		{"unmarked, used by this namespace too", identity.User{Owners: identity.Owners{
			"KeystoneService/openstack/glance/u2@c1": nil, "KeystoneService/tenant-a/glance/u1@c1": nil}}, ""},
		{"unmarked, used by other namespaces alone", identity.User{Owners: identity.Owners{
			"KeystoneService/tenant-b/glance/u3@c1": nil, "KeystoneService/openstack/glance/u2@c1": nil}},
			"user glance is used (unmarked, adopted) by KeystoneService/openstack/glance of the cluster c1"},
	}
	for _, c := range cases {
		c.user.Name = "glance"
		err := identity.OtherNamespaceUser(&c.user, ns)
		if c.refused == "" {
			g.Expect(err).NotTo(HaveOccurred(), c.name)
			continue
		}
		var foreign *identity.ForeignError
		g.Expect(errors.As(err, &foreign)).To(BeTrue(), c.name)
		g.Expect(err.Error()).To(Equal(c.refused), c.name)
	}
}

// TestBarredUserNeverTried (docs/security.md, policies that overlap): a user the owner
// is barred from (another namespace's admin, UserSpec.Barred) is refused as Keystone
// finds it, by ID, before any password is tried on it, whether the look-up or the create
// comes first; nothing of it changes.
func TestBarredUserNeverTried(t *testing.T) {
	g := NewWithT(t)
	keystone, _, kc := adminOfFake(t)
	ctx := context.Background()
	id := keystone.Create(fakekeystone.Users, map[string]any{"name": "tenant-a-2-operator", "domain_id": "default", "password": "theirs"})
	logins := func() int { return keystone.Requests()["POST /v3/auth"] }
	before := logins()
	for _, createFirst := range []bool{false, true} {
		_, _, err := kc.EnsureUser(ctx, identity.UserSpec{Name: "tenant-a-2-operator", DomainID: "default", Password: "guess",
			PasswordFrom: "s/1#k", Owner: "KeystoneService/tenant-a/x/u1@c1", New: createFirst, Barred: map[string]bool{id: true}})
		var admin *identity.AdminUserError
		g.Expect(errors.As(err, &admin)).To(BeTrue(), "%v", err)
		g.Expect(admin.Other).To(BeTrue())
		g.Expect(err.Error()).To(Equal("user tenant-a-2-operator is the admin user of another namespace's KeystoneAPI, as which " +
			"the operator acts for that namespace: no other namespace uses it"))
	}
	g.Expect(logins()).To(Equal(before), "no password tried")
	u := keystone.List(fakekeystone.Users, map[string]any{"id": id})[0]
	g.Expect(u).NotTo(HaveKey(identity.OwnerAttribute))
	g.Expect(u).NotTo(HaveKey(identity.OwnersAttribute))
}

// TestRefusedCheckNotMadeAgain (docs/security.md, spec.serviceUser): a password check
// Keystone refused, against a user the owner does not set it on (here adopted), is not
// made again until what decides it changes: the Secret's version, the user's password,
// the owner's Retry, back to an earlier value included; nor, with the refusal recorded
// by the owner (Refused), by another process, as after a restart.
func TestRefusedCheckNotMadeAgain(t *testing.T) {
	g := NewWithT(t)
	keystone, _, kc := adminOfFake(t)
	ctx := context.Background()
	keystone.Create(fakekeystone.Users, map[string]any{"name": "glance", "domain_id": "default", "password": "right"})
	checks := func() int { return keystone.Requests()["POST /v3/auth"] }
	want := identity.UserSpec{Name: "glance", DomainID: "default", Password: "guess", PasswordFrom: "s/1#GlancePassword",
		Owner: "KeystoneService/openstack/glance/u1@c1", Retry: "touched-0"}
	refused := func(want identity.UserSpec) string {
		t.Helper()
		_, _, err := kc.EnsureUser(ctx, want)
		var conflict *identity.PasswordConflictError
		g.Expect(errors.As(err, &conflict)).To(BeTrue(), "%v", err)
		g.Expect(conflict.Tried).NotTo(BeEmpty())
		return conflict.Tried
	}
	before := checks()
	first := refused(want)
	g.Expect(checks()).To(Equal(before+1), "checked once")
	g.Expect(refused(want)).To(Equal(first))
	g.Expect(checks()).To(Equal(before+1), "not again")

	want.Retry = "touched-1"
	second := refused(want)
	g.Expect(second).NotTo(Equal(first))
	g.Expect(checks()).To(Equal(before+2), "a touch: checked once more")
	want.Retry = "touched-0"
	g.Expect(refused(want)).To(Equal(first))
	g.Expect(checks()).To(Equal(before+3), "the touch undone is a change too")

	restarted := &identity.Clients{Transport: &http.Transport{}}
	kc2, err := restarted.Get(ctx, identity.Credentials{URL: keystone.URL, User: "admin", Password: "secret", Project: "admin", Domain: "Default"})
	g.Expect(err).NotTo(HaveOccurred())
	want.Refused = first
	logins := checks()
	_, _, err = kc2.EnsureUser(ctx, want)
	var conflict *identity.PasswordConflictError
	g.Expect(errors.As(err, &conflict)).To(BeTrue(), "%v", err)
	g.Expect(checks()).To(Equal(logins), "another process, the refusal recorded: no check")

	want.Password, want.PasswordFrom = "right", "s/2#GlancePassword"
	reg, _, err := kc2.EnsureUser(ctx, want)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(reg.Ownership).To(Equal(identity.Adopted))
}
