package identity_test

import (
	"context"
	"fmt"
	"net/http"
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
// Only a local user fails the create: a federated user of that name does not
// (TestFederatedUserPassedOver). Both read an unmarked user they find by ID besides, to
// tell a user with federated identities, which neither takes.
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
		// reads is how many reads of users the look-up first makes more than the create
		// first: a user with federated identities is passed over (its listing and its
		// read by ID), and found so again once Keystone refuses the create (409).
		reads int
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
		{name: "unmarked, with federated identities besides", there: func(k *fakekeystone.Server) {
			k.Create(fakekeystone.Users, map[string]any{"name": "glance", "domain_id": "default", "password": "pw", "enabled": true,
				"federated": []any{map[string]any{"idp_id": "idp", "protocols": []any{map[string]any{"protocol_id": "mapped", "unique_id": "u"}}}}})
		}, reads: 2},
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
			g.Expect(lookedUp.requests["GET /v3/users"]).To(Equal(created.requests["GET /v3/users"]+tc.reads), "the look-up first's reads")
			lookedUp.requests["GET /v3/users"] -= tc.reads
			g.Expect(created.requests).To(Equal(lookedUp.requests), "the same requests besides")
		})
	}
}

// TestFederatedUserPassedOver: a user of an identity provider that is no local user
// (a shadow user, Keystone's make at its first login) does not hold its name among
// local users: the look-up first passes over it, as the create that comes first does,
// and both create a local user beside it, without a password login of it (Keystone
// answers that with 500), and leave it as it was; a later look-up finds the local user,
// and its deletion removes that one. The real Keystone does the same
// (tests/realkeystone TestFederatedUserBesideCreated).
func TestFederatedUserPassedOver(t *testing.T) {
	const owner = "KeystoneService/openstack/glance/uid-1@cluster-one"
	want := identity.UserSpec{Name: "glance", DomainID: "default", Password: "pw", PasswordFrom: "secret-uid/1#GlancePassword", Owner: owner}
	for _, createFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("created first: %t", createFirst), func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			keystone, _, kc := adminOfFake(t)
			federated := keystone.CreateFederatedUser("glance", "default")
			spec := want
			spec.New = createFirst
			before := keystone.Requests()
			reg, changed, err := kc.EnsureUser(ctx, spec)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(changed).To(BeTrue())
			g.Expect(reg.Created).To(BeTrue())
			g.Expect(reg.Ownership).To(Equal(identity.Owned))
			g.Expect(reg.ID).NotTo(Equal(federated))
			requests := keystone.RequestsSince(before)
			g.Expect(requests).NotTo(HaveKey("POST /v3/auth"), "no login of the federated user")
			if createFirst {
				g.Expect(requests).To(Equal(map[string]int{"POST /v3/users": 1}))
			} else {
				g.Expect(requests).To(Equal(map[string]int{"GET /v3/users": 2, "POST /v3/users": 1}), "the listing, the federated user by ID, the create")
			}
			g.Expect(keystone.List(fakekeystone.Users, map[string]any{"id": federated})).To(ConsistOf(
				Not(HaveKey(identity.OwnerAttribute))), "the federated user is left as it was")

			before = keystone.Requests()
			again, changed, err := kc.EnsureUser(ctx, want)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(changed).To(BeFalse())
			g.Expect(again.ID).To(Equal(reg.ID), "a later look-up finds the local user first")
			g.Expect(keystone.RequestsSince(before)).To(Equal(map[string]int{"GET /v3/users": 1}), "a marked user is not read by ID")

			g.Expect(kc.DeleteUserNamed(ctx, "default", "glance", owner, false)).To(Succeed())
			g.Expect(keystone.List(fakekeystone.Users, map[string]any{"name": "glance"})).To(ConsistOf(HaveKeyWithValue("id", federated)))
		})
	}
}

// TestFederatedIdentitiesNeverTaken: no look-up by name takes a user with federated
// identities, whether Keystone made it at a login through an identity provider (no
// local user) or a local user was given them: neither is used, checked, marked, handed
// over nor deleted, a takeover's claim of unmarked users included; a local user given
// them holds its name, so the create fails and says why. A user of a name Keystone
// compares loosely is found past a federated one of the exact name.
func TestFederatedIdentitiesNeverTaken(t *testing.T) {
	const owner = "KeystoneService/openstack/glance/uid-1@cluster-one"
	want := identity.UserSpec{Name: "glance", DomainID: "default", Password: "pw", PasswordFrom: "secret-uid/1#GlancePassword",
		Owner: owner, ClaimUnmarked: true}
	fedIdentities := []any{map[string]any{"idp_id": "idp", "protocols": []any{map[string]any{"protocol_id": "mapped", "unique_id": "u"}}}}
	ctx := context.Background()

	t.Run("a local user with federated identities", func(t *testing.T) {
		for _, createFirst := range []bool{false, true} {
			g := NewWithT(t)
			keystone, _, kc := adminOfFake(t)
			person := keystone.Create(fakekeystone.Users, map[string]any{"name": "glance", "domain_id": "default", "password": "pw",
				"enabled": true, "federated": fedIdentities})
			spec := want
			spec.New = createFirst
			before := keystone.Requests()
			_, _, err := kc.EnsureUser(ctx, spec)
			g.Expect(err).To(MatchError(&identity.FederatedUserError{Name: spec.Name}))
			g.Expect(keystone.RequestsSince(before)).NotTo(HaveKey("POST /v3/auth"), "no password tried")
			handed, err := kc.HandOverUser(ctx, "default", "glance", owner, true, "KeystoneService/openstack/next/uid-2@cluster-one")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(handed).To(BeFalse())
			g.Expect(kc.DeleteUserNamed(ctx, "default", "glance", owner, true)).To(Succeed())
			found, err := kc.LookUpUser(ctx, "default", "glance")
			g.Expect(err).To(MatchError(&identity.FederatedUserError{Name: "glance"}), "nothing to log in as")
			g.Expect(found).To(BeNil())
			g.Expect(keystone.List(fakekeystone.Users, map[string]any{"name": "glance"})).To(ConsistOf(And(HaveKeyWithValue("id", person),
				Not(HaveKey(identity.OwnerAttribute)))), "left as it was")
		}
	})

	t.Run("a shadow user, at a takeover's deletion", func(t *testing.T) {
		g := NewWithT(t)
		keystone, _, kc := adminOfFake(t)
		federated := keystone.CreateFederatedUser("glance", "default")
		g.Expect(kc.DeleteUserNamed(ctx, "default", "glance", owner, true)).To(Succeed())
		handed, err := kc.HandOverUser(ctx, "default", "glance", owner, true, "KeystoneService/openstack/next/uid-2@cluster-one")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(handed).To(BeFalse())
		g.Expect(keystone.List(fakekeystone.Users, map[string]any{"id": federated})).To(ConsistOf(Not(HaveKey(identity.OwnerAttribute))))
	})

	t.Run("a takeover's deletion by a recorded ID", func(t *testing.T) {
		g := NewWithT(t)
		keystone, _, kc := adminOfFake(t)
		person := keystone.Create(fakekeystone.Users, map[string]any{"name": "glance", "domain_id": "default", "password": "pw",
			"enabled": true, "federated": fedIdentities})
		shadow := keystone.CreateFederatedUser("glance-shadow", "default")
		for _, id := range []string{person, shadow} {
			u, err := kc.GetUser(ctx, id)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(kc.DeleteOwnedUser(ctx, u, owner, true)).To(Succeed())
			g.Expect(keystone.List(fakekeystone.Users, map[string]any{"id": id})).To(ConsistOf(Not(HaveKey(identity.OwnerAttribute))), "left as it was")
		}
		plain := keystone.Create(fakekeystone.Users, map[string]any{"name": "glance-ko", "domain_id": "default", "password": "pw", "enabled": true})
		u, err := kc.GetUser(ctx, plain)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(kc.DeleteOwnedUser(ctx, u, owner, true)).To(Succeed())
		g.Expect(keystone.List(fakekeystone.Users, map[string]any{"id": plain})).To(BeEmpty(), "keystone-operator's local user is claimed and deleted")
	})

	t.Run("a read by ID that fails fails the look-up: nothing is taken on a guess", func(t *testing.T) {
		g := NewWithT(t)
		keystone, _, kc := adminOfFake(t)
		unmarked := keystone.Create(fakekeystone.Users, map[string]any{"name": "glance", "domain_id": "default", "password": "pw", "enabled": true})
		keystone.FailNext(http.MethodGet, "/v3/users/"+unmarked, http.StatusServiceUnavailable)
		before := keystone.Requests()
		_, _, err := kc.EnsureUser(ctx, want)
		g.Expect(err).To(MatchError(ContainSubstring("reading user " + unmarked)))
		g.Expect(keystone.RequestsSince(before)).To(Equal(map[string]int{"GET /v3/users": 2}), "the listing and the read, nothing else")
	})

	t.Run("a local user of the name but for case, past a shadow user of the exact name", func(t *testing.T) {
		g := NewWithT(t)
		keystone, _, kc := adminOfFake(t)
		keystone.FoldNames()
		local := keystone.Create(fakekeystone.Users, map[string]any{"name": "Glance", "domain_id": "default", "password": "pw", "enabled": true})
		keystone.CreateFederatedUser("glance", "default")
		for _, createFirst := range []bool{false, true} {
			spec := want
			spec.New = createFirst
			spec.ClaimUnmarked = false
			reg, _, err := kc.EnsureUser(ctx, spec)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(reg.ID).To(Equal(local), "the local user, adopted")
			g.Expect(reg.Ownership).To(Equal(identity.Adopted))
		}
	})
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
