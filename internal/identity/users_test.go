package identity_test

import (
	"context"
	"strings"
	"testing"

	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/tests/support/fakekeystone"
	. "github.com/onsi/gomega"
)

// TestNewUserCreatedFirst: a user the owner never registered (UserSpec.New) is created
// with one request, no look-up first; and wherever the user is there after all (the
// owner's own, another owner's, an unmarked one, the admin under another case), the
// create fails, changes nothing, and the user is taken exactly as the look-up first
// takes it: the same answer, the same entity after, the same other requests. A create
// Keystone refuses for another reason (a password its rules refuse) is looked up too.
// Only a local user fails the create: a federated user of that name does not, and is
// left beside the new local user (docs/registrations.md); the fake has no federated
// users, so that case is not here.
func TestNewUserCreatedFirst(t *testing.T) {
	const owner = "KeystoneService/openstack/glance/uid-1@cluster-one"
	want := identity.UserSpec{Name: "glance", DomainID: "default", Password: "pw", PasswordFrom: "secret-uid/1#GlancePassword", Owner: owner}

	t.Run("missing: one request", func(t *testing.T) {
		g := NewWithT(t)
		keystone, _, kc := adminOfFake(t)
		ctx := context.Background()
		before := keystone.Requests()
		fresh := want
		fresh.New = true
		reg, changed, err := kc.EnsureUser(ctx, fresh)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(changed).To(BeTrue())
		g.Expect(reg.Ownership).To(Equal(identity.Owned))
		g.Expect(reg.Created).To(BeTrue())
		after := keystone.Requests()
		g.Expect(after["POST /v3/users"] - before["POST /v3/users"]).To(Equal(1))
		g.Expect(after["GET /v3/users"]-before["GET /v3/users"]).To(Equal(0), "no look-up")
		g.Expect(keystone.List(fakekeystone.Users, map[string]any{"name": "glance"})).To(ConsistOf(
			And(HaveKeyWithValue(identity.OwnerAttribute, owner),
				HaveKeyWithValue(identity.PasswordFromAttribute, want.PasswordFrom))))
	})

	for _, tc := range []struct {
		name string
		// there makes the user that is there before the call; fold has Keystone compare
		// names without case, as its database usually does.
		there func(*fakekeystone.Server)
		fold  bool
		asked string
		// refuse has Keystone refuse the create with this code, whatever the name (a
		// password its rules refuse: 400).
		refuse int
	}{
		{name: "the owner's own, from the same source", there: func(k *fakekeystone.Server) {
			k.Create(fakekeystone.Users, map[string]any{"name": "glance", "domain_id": "default", "password": "pw", "enabled": true,
				identity.OwnerAttribute: owner, identity.PasswordFromAttribute: want.PasswordFrom})
		}},
		{name: "the owner's own, from another source", there: func(k *fakekeystone.Server) {
			k.Create(fakekeystone.Users, map[string]any{"name": "glance", "domain_id": "default", "password": "old", "enabled": true,
				identity.OwnerAttribute: owner, identity.PasswordFromAttribute: "secret-uid/0#GlancePassword"})
		}},
		{name: "another namespace's", there: func(k *fakekeystone.Server) {
			k.Create(fakekeystone.Users, map[string]any{"name": "glance", "domain_id": "default", "password": "theirs", "enabled": true,
				identity.OwnerAttribute: tenant})
		}},
		{name: "unmarked, with another password", there: func(k *fakekeystone.Server) {
			k.Create(fakekeystone.Users, map[string]any{"name": "glance", "domain_id": "default", "password": "by-hand", "enabled": true})
		}},
		{name: "unmarked, with the password", there: func(k *fakekeystone.Server) {
			k.Create(fakekeystone.Users, map[string]any{"name": "glance", "domain_id": "default", "password": "pw", "enabled": true})
		}},
		{name: "the admin, under another case", there: func(*fakekeystone.Server) {}, fold: true, asked: "ADMIN"},
		{name: "unmarked, a create refused for its password", there: func(k *fakekeystone.Server) {
			k.Create(fakekeystone.Users, map[string]any{"name": "glance", "domain_id": "default", "password": "pw", "enabled": true})
		}, refuse: 400},
		{name: "missing, a create refused for its password", there: func(*fakekeystone.Server) {}, refuse: 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			type outcome struct {
				reg      identity.Registered
				changed  bool
				err      string
				users    []map[string]any
				requests map[string]int
			}
			run := func(createFirst bool) outcome {
				keystone, _, kc := adminOfFake(t)
				if tc.fold {
					keystone.FoldNames()
				}
				tc.there(keystone)
				if tc.refuse != 0 {
					keystone.FailNext("POST", "/v3/users", tc.refuse)
				}
				spec := want
				if tc.asked != "" {
					spec.Name = tc.asked
				}
				spec.New = createFirst
				before := keystone.Requests()
				reg, changed, err := kc.EnsureUser(context.Background(), spec)
				o := outcome{reg: reg, changed: changed, users: keystone.List(fakekeystone.Users, map[string]any{}),
					requests: keystone.RequestsSince(before)}
				if err != nil {
					o.err = strings.ReplaceAll(err.Error(), keystone.URL, "KEYSTONE")
				}
				return o
			}
			lookedUp, created := run(false), run(true)
			g.Expect(created.err).To(Equal(lookedUp.err))
			g.Expect(created.reg).To(Equal(lookedUp.reg))
			g.Expect(created.changed).To(Equal(lookedUp.changed))
			g.Expect(created.users).To(ConsistOf(lookedUp.users), "the create changed nothing")
			g.Expect(created.requests).To(HaveKeyWithValue("POST /v3/users", 1), "the create, refused")
			delete(created.requests, "POST /v3/users")
			delete(lookedUp.requests, "POST /v3/users")
			g.Expect(created.requests).To(Equal(lookedUp.requests), "the same requests besides")
		})
	}
}

// TestUserCreatedMeanwhile: on the look-up-first path, a user another client created
// between the look-up and the create (409) is looked up again and taken as found: here
// the owner's own, from the same source, which is not written again.
func TestUserCreatedMeanwhile(t *testing.T) {
	g := NewWithT(t)
	keystone, _, kc := adminOfFake(t)
	keystone.RaceNext(fakekeystone.Users)
	want := identity.UserSpec{Name: "glance", DomainID: "default", Password: "pw", PasswordFrom: "secret-uid/1#GlancePassword",
		Owner: "KeystoneService/openstack/glance/uid-1@cluster-one"}
	before := keystone.Requests()
	reg, _, err := kc.EnsureUser(context.Background(), want)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(reg.Ownership).To(Equal(identity.Owned))
	g.Expect(reg.Created).To(BeFalse(), "not created by this call: its roles are listed, not assumed missing")
	requests := keystone.RequestsSince(before)
	g.Expect(requests["GET /v3/users"]).To(Equal(2), "looked up, then again after the 409")
	g.Expect(requests["POST /v3/users"]).To(Equal(1))
	g.Expect(requests["PATCH /v3/users"]).To(Equal(0))
	g.Expect(keystone.List(fakekeystone.Users, map[string]any{"name": "glance"})).To(HaveLen(1))
}
