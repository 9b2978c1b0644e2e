package identity_test

import (
	"context"
	"errors"
	"testing"

	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/tests/support/fakekeystone"
	. "github.com/onsi/gomega"
)

const (
	regionOne = "KeystoneService/openstack/placement/uid-1@cluster-one"
	regionTwo = "KeystoneService/openstack/placement/uid-2@cluster-two"
)

// TestRegionsShareAService: a service another region registered is joined, never
// changed, and goes with its last owner; a different definition is said, not written,
// and its region is not among the owners of record, so the service is never handed to it.
func TestRegionsShareAService(t *testing.T) {
	g := NewWithT(t)
	keystone, _, kc := adminOfFake(t)
	ctx := context.Background()
	spec := func(owner string) identity.ServiceSpec {
		return identity.ServiceSpec{Type: "placement", Name: "placement", Description: "Placement", Enabled: true, Owner: owner}
	}
	owners := func() any { return keystone.List(fakekeystone.Services, nil)[0][identity.OwnersAttribute] }
	one, _, err := kc.EnsureService(ctx, "", spec(regionOne))
	g.Expect(err).NotTo(HaveOccurred())

	other := spec(regionTwo)
	other.Enabled = false
	_, _, err = kc.EnsureService(ctx, "", other)
	var differs *identity.DefinitionConflictError
	g.Expect(errors.As(err, &differs)).To(BeTrue())
	g.Expect(err.Error()).To(Equal(`service placement/placement is kept by KeystoneService/openstack/placement of the cluster ` +
		`cluster-one with description "Placement", enabled true, where this spec says description "Placement", enabled false`))
	g.Expect(keystone.List(fakekeystone.Services, nil)[0]["enabled"]).To(BeTrue(), "nothing written")
	g.Expect(owners()).To(BeNil(), "not recorded: it could otherwise keep the service after regionOne, and disable it")

	two, changed, err := kc.EnsureService(ctx, "", spec(regionTwo))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeTrue(), "joined")
	g.Expect(two).To(Equal(identity.Registered{ID: one.ID, Ownership: identity.Joined, Keeper: regionOne}))
	g.Expect(keystone.List(fakekeystone.Services, nil)[0][identity.OwnerAttribute]).To(Equal(regionOne))
	g.Expect(owners()).To(HaveKey(regionTwo))
	_, changed, err = kc.EnsureService(ctx, "", spec(regionTwo))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeFalse(), "recorded once")

	_, _, err = kc.EnsureService(ctx, "", other)
	g.Expect(errors.As(err, &differs)).To(BeTrue())
	g.Expect(owners()).To(BeNil(), "a definition that no longer agrees takes the region out of the record, "+
		"its last owner: the record is removed (null)")
	_, _, err = kc.EnsureService(ctx, "", spec(regionTwo))
	g.Expect(err).NotTo(HaveOccurred())

	g.Expect(kc.DeleteService(ctx, one.ID, regionOne, nil)).To(Succeed())
	svc := keystone.List(fakekeystone.Services, nil)[0]
	g.Expect(svc[identity.OwnerAttribute]).To(Equal(regionTwo), "handed to the other region")
	g.Expect(svc[identity.OwnersAttribute]).NotTo(HaveKey(regionOne))
	g.Expect(kc.DeleteService(ctx, one.ID, regionTwo, nil)).To(Succeed())
	g.Expect(keystone.List(fakekeystone.Services, nil)).To(BeEmpty(), "its last owner deletes it")
}

// TestRegionsShareAUser: the keeper sets the password; a joining region checks it and
// never writes it, and is recorded, with the roles it asks for, only once it holds it;
// a region's object created again replaces its predecessor's record; the keeper hands
// the user to the region left, which deletes it last.
func TestRegionsShareAUser(t *testing.T) {
	g := NewWithT(t)
	keystone, _, kc := adminOfFake(t)
	ctx := context.Background()
	user := func(owner, password string, roles ...string) identity.UserSpec {
		// The source names the Secret's version, which changes with the password.
		return identity.UserSpec{Name: "placement", DomainID: "default", Password: password, PasswordFrom: owner + "#" + password,
			Owner: owner, Roles: roles}
	}
	owners := func() any {
		return keystone.List(fakekeystone.Users, map[string]any{"name": "placement"})[0][identity.OwnersAttribute]
	}
	one, _, err := kc.EnsureUser(ctx, user(regionOne, "pw", "admin", "service"))
	g.Expect(err).NotTo(HaveOccurred())
	_, _, err = kc.EnsureUser(ctx, user(regionTwo, "another", "service", "admin", "member"))
	var conflict *identity.PasswordConflictError
	g.Expect(errors.As(err, &conflict)).To(BeTrue())
	g.Expect(err.Error()).To(Equal("user placement has a password set by KeystoneService/openstack/placement of the cluster cluster-one, " +
		"and it is not this one"))
	works, err := kc.PasswordWorks(ctx, one.ID, "pw")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(works).To(BeTrue(), "the keeper's password, never overwritten")
	g.Expect(owners()).To(BeNil(), "not recorded: it asks for no role, and never keeps the user")

	two, _, err := kc.EnsureUser(ctx, user(regionTwo, "pw", "service", "reader"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(two.ID).To(Equal(one.ID))
	g.Expect(two.Ownership).To(Equal(identity.Joined))
	keeper, _, err := kc.EnsureUser(ctx, user(regionOne, "pw", "admin", "service"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(keeper.Ownership).To(Equal(identity.Owned))
	g.Expect(keeper.Owners.Roles()).To(Equal([]string{"reader", "service"}), "the other region's roles, for the union")
	g.Expect(owners()).To(Equal(map[string]any{regionTwo: []any{"reader", "service"}}))

	const regionTwoAgain = "KeystoneService/openstack/placement/uid-2b@cluster-two"
	_, _, err = kc.EnsureUser(ctx, user(regionTwoAgain, "pw", "service"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(owners()).To(Equal(map[string]any{regionTwoAgain: []any{"service"}}), "its predecessor's record replaced")
	const regionOneAgain = "KeystoneService/openstack/placement/uid-1b@cluster-one"
	again, _, err := kc.EnsureUser(ctx, user(regionOneAgain, "pw", "admin", "service"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again.Ownership).To(Equal(identity.Owned), "the keeper's predecessor's: claimed")
	g.Expect(keystone.List(fakekeystone.Users, map[string]any{"name": "placement"})[0][identity.OwnerAttribute]).To(Equal(regionOneAgain))

	_, _, err = kc.EnsureUser(ctx, user(regionTwoAgain, "stale", "service"))
	g.Expect(errors.As(err, &conflict)).To(BeTrue())
	g.Expect(owners()).To(BeNil(), "a password that no longer holds takes the region out of the record (null when none is left)")
	_, _, err = kc.EnsureUser(ctx, user(regionTwoAgain, "pw", "service"))
	g.Expect(err).NotTo(HaveOccurred())

	g.Expect(kc.DeleteUserNamed(ctx, "default", "placement", regionOneAgain, false)).To(Succeed())
	u := keystone.List(fakekeystone.Users, map[string]any{"name": "placement"})[0]
	g.Expect(u[identity.OwnerAttribute]).To(Equal(regionTwoAgain), "handed to the region left")
	g.Expect(kc.DeleteUserNamed(ctx, "default", "placement", regionTwoAgain, false)).To(Succeed())
	g.Expect(keystone.List(fakekeystone.Users, map[string]any{"name": "placement"})).To(BeEmpty(), "its last owner deletes it")
}

// TestAdoptersRecorded: a region using a user and service nobody marked (keystone-
// operator's) is recorded as using them, so that whoever claims them later hands them
// over rather than deleting them; its own deletion takes only its record away. An
// adopter of another namespace never keeps them: refused once they are claimed, it goes
// off the record, and no hand-over ever goes to it.
func TestAdoptersRecorded(t *testing.T) {
	g := NewWithT(t)
	keystone, _, kc := adminOfFake(t)
	ctx := context.Background()
	service := keystone.Create(fakekeystone.Services, map[string]any{"type": "placement", "name": "placement",
		"description": "Placement", "enabled": true})
	user := keystone.Create(fakekeystone.Users, map[string]any{"name": "placement", "domain_id": "default", "password": "pw"})
	placement := func(owner string, claim bool) identity.ServiceSpec {
		spec := identity.ServiceSpec{Type: "placement", Name: "placement", Description: "Placement", Enabled: true, Owner: owner}
		if claim {
			spec.Claim = claimAny
		}
		return spec
	}
	userOf := func(owner string, claim bool) identity.UserSpec {
		return identity.UserSpec{Name: "placement", DomainID: "default", Password: "pw", PasswordFrom: owner, Owner: owner,
			ClaimUnmarked: claim, Roles: []string{"service"}}
	}
	const tenant = "KeystoneService/tenant/placement/uid-9@cluster-one"
	for _, owner := range []string{regionTwo, tenant} {
		_, _, err := kc.EnsureService(ctx, "", placement(owner, false))
		g.Expect(err).NotTo(HaveOccurred())
		adopted, _, err := kc.EnsureUser(ctx, userOf(owner, false))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(adopted.Ownership).To(Equal(identity.Adopted))
	}
	u := keystone.List(fakekeystone.Users, map[string]any{"id": user})[0]
	g.Expect(u).NotTo(HaveKey(identity.OwnerAttribute), "adopted: never marked")
	g.Expect(u[identity.OwnersAttribute]).To(And(HaveKey(regionTwo), HaveKey(tenant)), "each recorded as using it")

	t.Log("regionOne claims them on keystone-operator's proof: the tenant, refused now, goes off the record")
	claimed, _, err := kc.EnsureService(ctx, service, placement(regionOne, true))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(claimed.Ownership).To(Equal(identity.Owned))
	keeper, _, err := kc.EnsureUser(ctx, userOf(regionOne, true))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(keeper.Owners).To(Equal(identity.Owners{regionTwo: {"service"}}), "only another region's roles count")
	_, _, err = kc.EnsureUser(ctx, userOf(tenant, false))
	var foreign *identity.ForeignError
	g.Expect(errors.As(err, &foreign)).To(BeTrue())
	g.Expect(keystone.List(fakekeystone.Users, map[string]any{"id": user})[0][identity.OwnersAttribute]).NotTo(HaveKey(tenant))

	t.Log("regionOne goes: regionTwo, on the record since it adopted them, keeps them")
	g.Expect(kc.DeleteService(ctx, service, regionOne, claimAny)).To(Succeed())
	g.Expect(kc.DeleteUserNamed(ctx, "default", "placement", regionOne, true)).To(Succeed())
	g.Expect(keystone.List(fakekeystone.Services, nil)[0][identity.OwnerAttribute]).To(Equal(regionTwo))
	g.Expect(keystone.List(fakekeystone.Users, map[string]any{"id": user})[0][identity.OwnerAttribute]).To(Equal(regionTwo))

	t.Log("an unmarked service a tenant adopted: claimed and deleted, never handed to the tenant")
	nova := keystone.Create(fakekeystone.Services, map[string]any{"type": "compute", "name": "nova", "description": "Nova", "enabled": true})
	novaSpec := identity.ServiceSpec{Type: "compute", Name: "nova", Description: "Nova", Enabled: true, Owner: tenant}
	_, _, err = kc.EnsureService(ctx, "", novaSpec)
	g.Expect(err).NotTo(HaveOccurred())
	novaSpec.Owner, novaSpec.Claim = regionOne, claimAny
	_, _, err = kc.EnsureService(ctx, nova, novaSpec)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(kc.DeleteService(ctx, nova, regionOne, claimAny)).To(Succeed())
	g.Expect(keystone.List(fakekeystone.Services, map[string]any{"type": "compute"})).To(BeEmpty(), "no region left to keep it")

	t.Log("an adopter going takes only its record away")
	unmarked := keystone.Create(fakekeystone.Services, map[string]any{"type": "image", "name": "glance", "description": "Glance", "enabled": true})
	_, _, err = kc.EnsureService(ctx, "", identity.ServiceSpec{Type: "image", Name: "glance", Description: "Glance", Enabled: true, Owner: regionTwo})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(kc.DeleteService(ctx, unmarked, regionTwo, nil)).To(Succeed())
	glance := keystone.List(fakekeystone.Services, map[string]any{"type": "image"})
	g.Expect(glance).To(HaveLen(1), "adopted: never deleted")
	g.Expect(glance[0]).To(HaveKeyWithValue(identity.OwnersAttribute, BeNil()), "only its record goes: the last, so the "+
		"attribute is null, as Keystone keeps an attribute once set")
}

// TestReleaseCluster: a cluster gone for good is taken out of what it registered: what
// other regions own too is left to them, its own alone is deleted, nothing else touched;
// a dry run changes nothing.
func TestReleaseCluster(t *testing.T) {
	g := NewWithT(t)
	keystone, _, kc := adminOfFake(t)
	ctx := context.Background()
	shared := keystone.Create(fakekeystone.Services, map[string]any{"type": "placement", "name": "placement",
		identity.OwnerAttribute: regionOne, identity.OwnersAttribute: map[string]any{regionTwo: []any{}}})
	alone := keystone.Create(fakekeystone.Users, map[string]any{"name": "nova", "domain_id": "default",
		identity.OwnerAttribute: "KeystoneService/openstack/nova/uid-3@cluster-one"})
	gone := keystone.Create(fakekeystone.Endpoints, map[string]any{"service_id": shared, "interface": "public", "url": "https://placement.one",
		"region": "regionOne", identity.OwnerAttribute: "KeystoneEndpoint/openstack/placement/uid-4@cluster-one"})
	keystone.Create(fakekeystone.Endpoints, map[string]any{"service_id": shared, "interface": "public", "url": "https://placement.two",
		"region": "regionTwo", identity.OwnerAttribute: "KeystoneEndpoint/openstack/placement/uid-5@cluster-two"})
	keystone.Create(fakekeystone.Users, map[string]any{"name": "person", "domain_id": "default"})

	plan, err := kc.ReleaseCluster(ctx, "cluster-one", false)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(plan).To(ConsistOf(
		identity.Release{Entity: "endpoint public https://placement.one in regionOne (" + gone + ")", Action: "deleted"},
		identity.Release{Entity: "service placement/placement (" + shared + ")", Action: "handed to KeystoneService placement"},
		identity.Release{Entity: "user nova (" + alone + ")", Action: "deleted"}))
	g.Expect(keystone.List(fakekeystone.Endpoints, nil)).To(HaveLen(2), "a dry run changes nothing")

	done, err := kc.ReleaseCluster(ctx, "cluster-one", true)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(done).To(Equal(plan), "what the dry run said")
	g.Expect(keystone.List(fakekeystone.Endpoints, nil)).To(ConsistOf(HaveKeyWithValue("url", "https://placement.two")))
	g.Expect(keystone.List(fakekeystone.Services, nil)[0][identity.OwnerAttribute]).To(Equal(regionTwo))
	g.Expect(keystone.List(fakekeystone.Users, map[string]any{"name": "nova"})).To(BeEmpty())
	g.Expect(keystone.List(fakekeystone.Users, map[string]any{"name": "person"})).To(HaveLen(1), "unmarked: untouched")
	again, err := kc.ReleaseCluster(ctx, "cluster-one", false)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again).To(BeEmpty(), "nothing of cluster-one left")

	keystone.ListLimit(1)
	_, err = kc.ReleaseCluster(ctx, "cluster-two", false)
	g.Expect(err).To(MatchError(ContainSubstring("Keystone truncated the list (its list_limit)")),
		"a release from part of the lists would leave the rest, unsaid")
}

// TestRefusedPasswordNotRetried: a password Keystone refused for a user another owner
// keeps is not tried again, every refusal counting towards Keystone's lockout of that
// user for everyone, until the Secret's version or the user's password changes.
func TestRefusedPasswordNotRetried(t *testing.T) {
	g := NewWithT(t)
	keystone, _, kc := adminOfFake(t)
	ctx := context.Background()
	_, _, err := kc.EnsureUser(ctx, identity.UserSpec{Name: "placement", DomainID: "default", Password: "pw", PasswordFrom: "one#1", Owner: regionOne})
	g.Expect(err).NotTo(HaveOccurred())
	tokens := func() int { return keystone.Requests()["POST /v3/auth"] }
	joiner := identity.UserSpec{Name: "placement", DomainID: "default", Password: "stale", PasswordFrom: "two#1", Owner: regionTwo}
	var conflict *identity.PasswordConflictError
	_, _, err = kc.EnsureUser(ctx, joiner)
	g.Expect(errors.As(err, &conflict)).To(BeTrue())
	before := tokens()
	for range 3 {
		_, _, err = kc.EnsureUser(ctx, joiner)
		g.Expect(errors.As(err, &conflict)).To(BeTrue())
	}
	g.Expect(tokens()).To(Equal(before), "the same refused password is not tried again")
	joiner.Retry = "touched"
	_, _, err = kc.EnsureUser(ctx, joiner)
	g.Expect(errors.As(err, &conflict)).To(BeTrue())
	g.Expect(tokens()).To(Equal(before+1), "tried once more when its owner is touched")
	before = tokens()

	_, _, err = kc.EnsureUser(ctx, identity.UserSpec{Name: "placement", DomainID: "default", Password: "stale", PasswordFrom: "one#2", Owner: regionOne})
	g.Expect(err).NotTo(HaveOccurred(), "the keeper sets another password")
	_, _, err = kc.EnsureUser(ctx, joiner)
	g.Expect(err).NotTo(HaveOccurred(), "tried again once the user's password changed: it is the joiner's now")
	g.Expect(tokens()).To(BeNumerically(">", before))

	joiner.Password, joiner.PasswordFrom = "other", "two#2"
	_, _, err = kc.EnsureUser(ctx, joiner)
	g.Expect(errors.As(err, &conflict)).To(BeTrue(), "a new Secret version is tried")
}
