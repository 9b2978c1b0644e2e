package multiregion

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/users"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	. "github.com/onsi/gomega"
)

// TestKeystoneReadByIDLags: Keystone's copy of a user read by ID ([cache] enabled, as
// deployed) can miss a change for the cache's lifetime when a read by ID ran while the
// change was written (update_user drops the copy before it writes); the operator's read
// (identity.Client.GetUser, which every decision on an owner's mark or record goes
// through) has the change every time. Rounds go on until Keystone's own read was seen
// to lag three times, so that the case is exercised, not assumed.
func TestKeystoneReadByIDLags(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	url, kc := sharedKeystone(t)
	clients := &identity.Clients{}
	ours, err := clients.Get(ctx, identity.Credentials{URL: url, User: "admin", Password: adminPassword, Project: "admin",
		Domain: "Default"})
	g.Expect(err).NotTo(HaveOccurred())
	lagged, rounds := 0, 0
	for ; lagged < 3 && rounds < 40; rounds++ {
		u, err := users.Create(ctx, kc, users.CreateOpts{Name: fmt.Sprintf("lag-%d", rounds), DomainID: "default", Password: "pw-0"}).Extract()
		g.Expect(err).NotTo(HaveOccurred())
		// Reads by ID while the change (a password, as a claim writes it, and a mark) is written.
		done := make(chan struct{})
		var reading sync.WaitGroup
		reading.Add(1)
		go func() {
			defer reading.Done()
			for {
				select {
				case <-done:
					return
				default:
					_, _ = users.Get(ctx, kc, u.ID).Extract()
				}
			}
		}()
		_, err = kc.Patch(ctx, kc.ServiceURL("users", u.ID), map[string]any{"user": map[string]any{"password": "pw-1",
			identity.OwnerAttribute: "changed"}}, nil, nil)
		close(done)
		reading.Wait()
		g.Expect(err).NotTo(HaveOccurred())

		var byID map[string]map[string]any
		_, err = kc.Get(ctx, kc.ServiceURL("users", u.ID), &byID, nil)
		g.Expect(err).NotTo(HaveOccurred())
		if byID["user"][identity.OwnerAttribute] != "changed" {
			lagged++
		}
		got, err := ours.GetUser(ctx, u.ID)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got).NotTo(BeNil())
		g.Expect(got.Owner).To(Equal("changed"), "round %d: the operator's read has the change", rounds)
	}
	t.Logf("Keystone's read by ID lagged in %d of %d rounds; the operator's read had the change in all", lagged, rounds)
	g.Expect(lagged).To(Equal(3), "Keystone's read by ID never lagged three times in %d rounds: the case is not exercised", rounds)
}
