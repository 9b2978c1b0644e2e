package identity_test

import (
	"context"
	"testing"

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
	before := keystone.Requests()
	u, err = kc.GetUser(ctx, userID)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(u).NotTo(BeNil(), "renamed: found in its domain's listing")
	g.Expect(u.Name).To(Equal("placement-renamed"))
	g.Expect(delta(before, keystone.Requests())).To(Equal(map[string]int{"GET /v3/users": 2}),
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

// delta is the requests made between two counts of fakekeystone.Server.Requests.
func delta(before, after map[string]int) map[string]int {
	out := map[string]int{}
	for k, n := range after {
		if d := n - before[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}
