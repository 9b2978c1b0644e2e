package identity_test

import (
	"context"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/services"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/users"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/tests/support/fakekeystone"
	"github.com/keystone-stepwise/keystone-operator/tests/support/keystoneadmin"
	. "github.com/onsi/gomega"
)

// TestReadsFollowTheListing: a user or service read by ID is read from the listing
// that holds it (fresh.go), which the client locates once: renamed, or given another
// type, after that, it is still found (in its domain's, or every service's, listing);
// deleted, it is gone, and found again by a new read once created anew.
func TestReadsFollowTheListing(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	keystone, admin, kc, userID := renamedAfterLocated(t)
	before := keystone.Requests()
	u, err := kc.GetUser(ctx, userID)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(u).NotTo(BeNil(), "renamed: found in its domain's listing")
	g.Expect(u.Name).To(Equal("placement-renamed"))
	g.Expect(keystone.RequestsSince(before)).To(Equal(map[string]int{"GET /v3/users": 2}),
		"located already: no read by ID, the listing by its former name, then its domain's")
	keystone.Delete(fakekeystone.Users, userID)
	u, err = kc.GetUser(ctx, userID)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(u).To(BeNil(), "deleted: gone, though located")

	serviceID := keystone.Create(fakekeystone.Services, map[string]any{"type": "placement", "name": "placement",
		identity.OwnerAttribute: "mark"})
	svc, ownership, err := kc.ServiceOwnership(ctx, serviceID, "another")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(svc).NotTo(BeNil())
	g.Expect(svc.Type).To(Equal("placement"))
	g.Expect(ownership).To(Equal(identity.Foreign))
	_, err = services.Update(ctx, admin, serviceID, services.UpdateOpts{Type: "placement-v2"}).Extract()
	g.Expect(err).NotTo(HaveOccurred())
	svc, _, err = kc.ServiceOwnership(ctx, serviceID, "another")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(svc).NotTo(BeNil(), "another type: found among all services")
	g.Expect(svc.Type).To(Equal("placement-v2"))
	keystone.Delete(fakekeystone.Services, serviceID)
	svc, _, err = kc.ServiceOwnership(ctx, serviceID, "another")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(svc).To(BeNil(), "deleted: gone")
}

// TestTruncatedListingIsAnError: a listing Keystone's list_limit cut short is an error,
// never "gone": a user renamed after it was located, read from its domain's listing of
// more users than the limit, would otherwise read as deleted, and its owner's deletion
// would leave it in Keystone.
func TestTruncatedListingIsAnError(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	keystone, _, kc, userID := renamedAfterLocated(t)
	keystone.Create(fakekeystone.Users, map[string]any{"name": "someone", "domain_id": "default"})
	keystone.ListLimit(1)
	u, err := kc.GetUser(ctx, userID)
	g.Expect(err).To(MatchError(ContainSubstring("listing users (domain_id=default): Keystone truncated the list")))
	g.Expect(u).To(BeNil())
	keystone.ListLimit(0)
	u, err = kc.GetUser(ctx, userID)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(u).NotTo(BeNil(), "still located: found in the whole listing")
	g.Expect(u.Name).To(Equal("placement-renamed"))
}

// TestEveryListingRefusesTruncation: the roles' and a service's endpoints' listings
// refuse a list Keystone cut short too: a role or an endpoint left out would otherwise
// read as missing and be created again.
func TestEveryListingRefusesTruncation(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	keystone, _, kc := adminOfFake(t)
	keystone.Create(fakekeystone.Roles, map[string]any{"name": "observer"})
	serviceID := keystone.Create(fakekeystone.Services, map[string]any{"type": "placement", "name": "placement"})
	for _, iface := range []string{"public", "internal"} {
		keystone.Create(fakekeystone.Endpoints, map[string]any{"service_id": serviceID, "interface": iface,
			"url": "https://placement." + iface, "region": "regionOne", identity.OwnerAttribute: "mark"})
	}
	roles := len(keystone.List(fakekeystone.Roles, nil))
	g.Expect(roles).To(BeNumerically(">", 1))
	keystone.ListLimit(1)
	_, _, err := kc.EnsureRoles(ctx, []string{"observer"}, true)
	g.Expect(err).To(MatchError(ContainSubstring("listing roles: Keystone truncated the list")))
	_, _, err = kc.EnsureEndpoints(ctx, identity.EndpointSet{ServiceID: serviceID, Region: "regionOne", Owner: "mark",
		URLs: map[string]string{"public": "https://placement.public", "internal": "https://placement.internal"}})
	g.Expect(err).To(MatchError(ContainSubstring("listing endpoints (service_id=" + serviceID + "): Keystone truncated the list")))
	g.Expect(keystone.List(fakekeystone.Roles, nil)).To(HaveLen(roles), "no role created again")
	g.Expect(keystone.List(fakekeystone.Endpoints, nil)).To(HaveLen(2), "no endpoint created again")
}

// renamedAfterLocated makes the user placement, marked "mark", in a fake Keystone; the
// client under test reads it (and so locates it by its name), then an admin renames it
// placement-renamed. It returns the fake, the admin's client, the client under test and
// the user's ID.
func renamedAfterLocated(t *testing.T) (*fakekeystone.Server, *gophercloud.ServiceClient, *identity.Client, string) {
	g := NewWithT(t)
	ctx := context.Background()
	keystone, _, kc := adminOfFake(t)
	admin, err := keystoneadmin.Client(ctx, keystone.URL, nil, "admin", "secret", "admin")
	g.Expect(err).NotTo(HaveOccurred())
	userID := keystone.Create(fakekeystone.Users, map[string]any{"name": "placement", "domain_id": "default",
		identity.OwnerAttribute: "mark"})
	u, err := kc.GetUser(ctx, userID)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(u).NotTo(BeNil())
	g.Expect(u.Name).To(Equal("placement"))
	g.Expect(u.Owner).To(Equal("mark"))
	_, err = users.Update(ctx, admin, userID, users.UpdateOpts{Name: "placement-renamed"}).Extract()
	g.Expect(err).NotTo(HaveOccurred())
	return keystone, admin, kc, userID
}
