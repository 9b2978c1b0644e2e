package identity_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	. "github.com/onsi/gomega"
)

// TestSeenIsWhatRecordsReads: what a round reads and creates under identity.Observing
// gives, for its service, its user and its type's group, the records Records reads
// afterwards: for a new registration (all services listed, service and user created) and
// a converged one (its type listed, its user found). A write that changes a record
// spoils it, and so does an entity read twice with different records.
func TestSeenIsWhatRecordsReads(t *testing.T) {
	g := NewWithT(t)
	_, _, kc := adminOfFake(t)
	ctx := context.Background()
	service := identity.ServiceSpec{Type: "placement", Name: "placement", Description: "Placement", Enabled: true, Owner: regionOne}
	user := identity.UserSpec{Name: "Placement", DomainID: "default", Password: "pw", PasswordFrom: "uid/1#key", Owner: regionOne}
	// Another service, of another type, and another user: not part of this one's records.
	_, _, err := kc.EnsureService(ctx, "", identity.ServiceSpec{Type: "image", Name: "glance", Enabled: true, Owner: regionTwo})
	g.Expect(err).NotTo(HaveOccurred())
	_, _, err = kc.EnsureUser(ctx, identity.UserSpec{Name: "glance", DomainID: "default", Password: "pw", Owner: regionTwo})
	g.Expect(err).NotTo(HaveOccurred())
	keys := []string{"service/placement/placement", identity.UserRecord("placement"), identity.TypeRecord("placement")}
	records := func() map[string]string {
		all, err := kc.Records(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		return all
	}
	expectSame := func(seen *identity.Seen, what string) {
		got, ok := seen.Records()
		g.Expect(ok).To(BeTrue(), what)
		want := records()
		g.Expect(got).NotTo(HaveKey("service/image/glance"), what+": another type's group")
		g.Expect(got).NotTo(HaveKey(identity.UserRecord("glance")), what+": another user")
		for _, key := range keys {
			g.Expect(want[key]).NotTo(BeEmpty(), what+": "+key)
			g.Expect(got[key]).To(Equal(want[key]), what+": "+key)
		}
	}

	seen := identity.NewSeen("placement", "Placement")
	round := identity.Observing(ctx, seen)
	created, _, err := kc.EnsureService(round, "", service)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(created.Created).To(BeTrue())
	_, _, err = kc.EnsureUser(round, user)
	g.Expect(err).NotTo(HaveOccurred())
	expectSame(seen, "a new registration")

	seen = identity.NewSeen("placement", "Placement")
	round = identity.Observing(ctx, seen)
	_, changed, err := kc.EnsureService(round, created.ID, service)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeFalse())
	_, changed, err = kc.EnsureUser(round, user)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeFalse())
	expectSame(seen, "a converged registration")

	seen = identity.NewSeen("placement", "Placement")
	round = identity.Observing(ctx, seen)
	redefined := service
	redefined.Description = "Placement API"
	_, changed, err = kc.EnsureService(round, created.ID, redefined)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeTrue())
	_, ok := seen.Records()
	g.Expect(ok).To(BeFalse(), "the round changed a record it had read")

	seen = identity.NewSeen("placement", "Placement")
	round = identity.Observing(ctx, seen)
	_, _, err = kc.EnsureService(round, created.ID, redefined)
	g.Expect(err).NotTo(HaveOccurred())
	// Another region joins between two reads of the round: it decided from the first.
	_, _, err = kc.EnsureService(ctx, "", identity.ServiceSpec{Type: "placement", Name: "placement", Description: "Placement API",
		Enabled: true, Owner: regionTwo})
	g.Expect(err).NotTo(HaveOccurred())
	_, _, err = kc.EnsureService(round, created.ID, redefined)
	g.Expect(err).NotTo(HaveOccurred())
	_, ok = seen.Records()
	g.Expect(ok).To(BeFalse(), "an entity read twice, changed in between")

	seen = identity.NewSeen("placement", "Placement")
	round = identity.Observing(ctx, seen)
	_, _, err = kc.EnsureService(round, created.ID, redefined)
	g.Expect(err).NotTo(HaveOccurred())
	// Another service of the type comes between two listings of the round.
	_, _, err = kc.EnsureService(ctx, "", identity.ServiceSpec{Type: "placement", Name: "placement-two", Enabled: true, Owner: regionOne})
	g.Expect(err).NotTo(HaveOccurred())
	_, _, err = kc.EnsureService(round, created.ID, redefined)
	g.Expect(err).NotTo(HaveOccurred())
	_, ok = seen.Records()
	g.Expect(ok).To(BeFalse(), "a service a later listing brings that an earlier did not show")
}

// TestChangesRecords: which requests spoil a Seen (identity.ChangesRecords).
func TestChangesRecords(t *testing.T) {
	g := NewWithT(t)
	for _, c := range []struct {
		method, path string
		changes      bool
	}{
		{http.MethodGet, "/v3/services", false},
		{http.MethodGet, "/identity/v3/users/u1", false},
		{http.MethodPost, "/v3/services", false}, // recorded by the create
		{http.MethodPost, "/v3/users", false},
		{http.MethodPost, "/v3/projects", false},
		{http.MethodPost, "/v3/roles", false},
		{http.MethodPost, "/v3/auth/tokens", false},
		{http.MethodPut, "/v3/projects/p1/users/u1/roles/r1", false},
		{http.MethodDelete, "/v3/projects/p1/users/u1/roles/r1", false},
		{http.MethodPatch, "/v3/services/s1", true},
		{http.MethodPatch, "/identity/v3/users/u1", true},
		{http.MethodDelete, "/v3/services/s1", true},
		{http.MethodDelete, "/v3/users/u1", true},
		{http.MethodPost, "/v3/endpoints", true}, // not a create Seen records, nor one it may ignore
		{http.MethodPost, "/v3/users/u1/password", true},
		{http.MethodPatch, "/somewhere/else", true},
	} {
		g.Expect(identity.ChangesRecords(c.method, c.path)).To(Equal(c.changes), c.method+" "+c.path)
	}
}

// TestRecordIsOneString: an entity's record is one string whatever order its owners of
// record come in (a map: the regions' watch and a round's Seen compare records as
// strings, so an order that changed from one call to the next would read as a change).
func TestRecordIsOneString(t *testing.T) {
	g := NewWithT(t)
	owners := identity.Owners{"KeystoneService/c/ns/b": {"admin"}, "KeystoneService/a/ns/b": {"admin", "service"},
		"KeystoneService/b/ns/b": nil}
	want := `keeper {"KeystoneService/a/ns/b":["admin","service"],"KeystoneService/b/ns/b":null,"KeystoneService/c/ns/b":["admin"]} more`
	for range 100 {
		g.Expect(identity.Record("keeper", owners, "more")).To(Equal(want))
	}
}
