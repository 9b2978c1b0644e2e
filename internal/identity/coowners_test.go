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
// changed, and goes with its last owner; a different definition is said, not written.
func TestRegionsShareAService(t *testing.T) {
	g := NewWithT(t)
	keystone, _, kc := adminOfFake(t)
	ctx := context.Background()
	spec := func(owner string) identity.ServiceSpec {
		return identity.ServiceSpec{Type: "placement", Name: "placement", Description: "Placement", Enabled: true, Owner: owner}
	}
	one, _, err := kc.EnsureService(ctx, "", spec(regionOne))
	g.Expect(err).NotTo(HaveOccurred())
	two, changed, err := kc.EnsureService(ctx, "", spec(regionTwo))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeTrue(), "joined")
	g.Expect(two).To(Equal(identity.Registered{ID: one.ID, Ownership: identity.Joined, Keeper: regionOne}))
	svc := keystone.List(fakekeystone.Services, nil)[0]
	g.Expect(svc[identity.OwnerAttribute]).To(Equal(regionOne))
	g.Expect(svc[identity.OwnersAttribute]).To(HaveKey(regionTwo))

	other := spec(regionTwo)
	other.Description = "Another"
	_, _, err = kc.EnsureService(ctx, "", other)
	var differs *identity.DefinitionConflictError
	g.Expect(errors.As(err, &differs)).To(BeTrue())
	g.Expect(err.Error()).To(Equal(`service placement/placement is kept by KeystoneService/openstack/placement of the cluster ` +
		`cluster-one with description "Placement", enabled true, where this spec says description "Another", enabled true`))
	g.Expect(keystone.List(fakekeystone.Services, nil)[0]["description"]).To(Equal("Placement"), "nothing written")

	g.Expect(kc.DeleteService(ctx, one.ID, regionOne, false)).To(Succeed())
	svc = keystone.List(fakekeystone.Services, nil)[0]
	g.Expect(svc[identity.OwnerAttribute]).To(Equal(regionTwo), "handed to the other region")
	g.Expect(svc[identity.OwnersAttribute]).NotTo(HaveKey(regionOne))
	g.Expect(kc.DeleteService(ctx, one.ID, regionTwo, false)).To(Succeed())
	g.Expect(keystone.List(fakekeystone.Services, nil)).To(BeEmpty(), "its last owner deletes it")
}

// TestRegionsShareAUser: the keeper sets the password, a joining region checks it and
// never writes it, and the roles each asks for are recorded for their union.
func TestRegionsShareAUser(t *testing.T) {
	g := NewWithT(t)
	keystone, _, kc := adminOfFake(t)
	ctx := context.Background()
	user := func(owner, password string, roles ...string) identity.UserSpec {
		return identity.UserSpec{Name: "placement", DomainID: "default", Password: password, PasswordFrom: owner, Owner: owner, Roles: roles}
	}
	one, _, err := kc.EnsureUser(ctx, user(regionOne, "pw", "admin", "service"))
	g.Expect(err).NotTo(HaveOccurred())
	_, _, err = kc.EnsureUser(ctx, user(regionTwo, "another", "service"))
	var conflict *identity.PasswordConflictError
	g.Expect(errors.As(err, &conflict)).To(BeTrue())
	g.Expect(err.Error()).To(Equal("user placement has a password set by KeystoneService/openstack/placement of the cluster cluster-one, " +
		"and it is not this one"))
	works, err := kc.PasswordWorks(ctx, one.ID, "pw")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(works).To(BeTrue(), "the keeper's password, never overwritten")

	two, _, err := kc.EnsureUser(ctx, user(regionTwo, "pw", "service", "reader"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(two.ID).To(Equal(one.ID))
	g.Expect(two.Ownership).To(Equal(identity.Joined))
	keeper, _, err := kc.EnsureUser(ctx, user(regionOne, "pw", "admin", "service"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(keeper.Ownership).To(Equal(identity.Owned))
	g.Expect(keeper.Owners.Roles()).To(Equal([]string{"reader", "service"}), "the other region's roles, for the union")
	u := keystone.List(fakekeystone.Users, map[string]any{"name": "placement"})[0]
	g.Expect(u[identity.OwnersAttribute]).To(And(HaveKey(regionOne), HaveKey(regionTwo)), "the keeper records its own roles among them")

	g.Expect(kc.DeleteUserNamed(ctx, "default", "placement", regionTwo, false)).To(Succeed())
	u = keystone.List(fakekeystone.Users, map[string]any{"name": "placement"})[0]
	g.Expect(u[identity.OwnerAttribute]).To(Equal(regionOne))
	g.Expect(u[identity.OwnersAttribute]).NotTo(HaveKey(regionTwo), "left the owners of record")
	g.Expect(kc.DeleteUserNamed(ctx, "default", "placement", regionOne, false)).To(Succeed())
	g.Expect(keystone.List(fakekeystone.Users, map[string]any{"name": "placement"})).To(BeEmpty())
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

	_, err = kc.ReleaseCluster(ctx, "cluster-one", true)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(keystone.List(fakekeystone.Endpoints, nil)).To(ConsistOf(HaveKeyWithValue("url", "https://placement.two")))
	g.Expect(keystone.List(fakekeystone.Services, nil)[0][identity.OwnerAttribute]).To(Equal(regionTwo))
	g.Expect(keystone.List(fakekeystone.Users, map[string]any{"name": "nova"})).To(BeEmpty())
	g.Expect(keystone.List(fakekeystone.Users, map[string]any{"name": "person"})).To(HaveLen(1), "unmarked: untouched")
}
