package identity_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/tests/support/fakekeystone"
	. "github.com/onsi/gomega"
)

const tenant = "KeystoneService/tenant/glance-evil/uid-7@cluster-one"

// TestOneServiceOfAType: a second service of a type, under another name, is refused
// naming the one there, whoever registered it (another owner, or nobody: unmarked), and
// so is one of a type clients take for it (an alias, "_" for "-") unless the same
// namespace registered it; the owner's own service of a previous name is no obstacle.
func TestOneServiceOfAType(t *testing.T) {
	g := NewWithT(t)
	keystone, _, kc := adminOfFake(t)
	ctx := context.Background()
	glance, _, err := kc.EnsureService(ctx, "", identity.ServiceSpec{Type: "image", Name: "glance", Enabled: true, Owner: regionOne})
	g.Expect(err).NotTo(HaveOccurred())

	_, _, err = kc.EnsureService(ctx, "", identity.ServiceSpec{Type: "image", Name: "glance-evil", Enabled: true, Owner: tenant})
	var taken *identity.TypeTakenError
	g.Expect(errors.As(err, &taken)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(Equal("Keystone has a service of type image already: glance (" + glance.ID + "), registered by " +
		"KeystoneService/openstack/placement of the cluster cluster-one; a catalog has one service of a type"))
	g.Expect(keystone.List(fakekeystone.Services, map[string]any{"type": "image"})).To(HaveLen(1), "nothing created")

	bootstrap := keystone.Create(fakekeystone.Services, map[string]any{"type": "identity", "name": "keystone", "enabled": true})
	_, _, err = kc.EnsureService(ctx, "", identity.ServiceSpec{Type: "identity", Name: "keystone-2", Enabled: true, Owner: tenant})
	g.Expect(errors.As(err, &taken)).To(BeTrue())
	g.Expect(err.Error()).To(Equal("Keystone has a service of type identity already: keystone (" + bootstrap + "), which this " +
		"operator did not register (made by hand, by keystone-manage bootstrap, or by keystone-operator); a catalog has one " +
		"service of a type"))

	t.Log("the types clients take for one another: an alias, or \"_\" for \"-\"")
	cinder := "KeystoneService/openstack/cinderv3/uid-3@cluster-one"
	_, _, err = kc.EnsureService(ctx, "", identity.ServiceSpec{Type: "volumev3", Name: "cinderv3", Enabled: true, Owner: cinder})
	g.Expect(err).NotTo(HaveOccurred())
	_, _, err = kc.EnsureService(ctx, "", identity.ServiceSpec{Type: "block-storage", Name: "tenant-a-cinder", Enabled: true, Owner: tenant})
	g.Expect(errors.As(err, &taken)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(HavePrefix("Keystone has a service of type volumev3 (which clients take for block-storage) already: cinderv3"))
	octavia := "KeystoneService/openstack/octavia/uid-4@cluster-one"
	_, _, err = kc.EnsureService(ctx, "", identity.ServiceSpec{Type: "load-balancer", Name: "octavia", Enabled: true, Owner: octavia})
	g.Expect(err).NotTo(HaveOccurred())
	_, _, err = kc.EnsureService(ctx, "", identity.ServiceSpec{Type: "load_balancer", Name: "tenant-a-lb", Enabled: true, Owner: tenant})
	g.Expect(errors.As(err, &taken)).To(BeTrue(), "%v", err)
	g.Expect(keystone.List(fakekeystone.Services, map[string]any{"name": "tenant-a-lb"})).To(BeEmpty())

	t.Log("manila-operator's share and sharev2, aliases of one type, side by side in one namespace")
	for _, s := range []identity.ServiceSpec{{Type: "sharev2", Name: "manilav2", Owner: "KeystoneService/openstack/manilav2/uid-5@cluster-one"},
		{Type: "share", Name: "manila", Owner: "KeystoneService/openstack/manila/uid-6@cluster-one"}} {
		s.Enabled = true
		_, _, err = kc.EnsureService(ctx, "", s)
		g.Expect(err).NotTo(HaveOccurred(), s.Type)
	}

	renamed, changed, err := kc.EnsureService(ctx, glance.ID, identity.ServiceSpec{Type: "image", Name: "glance-2", Enabled: true, Owner: regionOne})
	g.Expect(err).NotTo(HaveOccurred(), "its own previous service is no obstacle: it goes once the new one exists")
	g.Expect(changed).To(BeTrue())
	g.Expect(renamed.ID).NotTo(Equal(glance.ID))
}

// TestAdoptedServiceNeverRedefined: a service that existed unmarked is used as it is,
// its description and enabled flag never written: another definition is a
// DefinitionConflictError naming what it has, and its adopter is not on its record.
func TestAdoptedServiceNeverRedefined(t *testing.T) {
	g := NewWithT(t)
	keystone, _, kc := adminOfFake(t)
	ctx := context.Background()
	id := keystone.Create(fakekeystone.Services, map[string]any{"type": "dns", "name": "designate", "description": "DNS", "enabled": true})
	before := keystone.Requests()["PATCH /v3/services"]
	_, _, err := kc.EnsureService(ctx, "", identity.ServiceSpec{Type: "dns", Name: "designate", Description: "mine", Enabled: false, Owner: tenant})
	var differs *identity.DefinitionConflictError
	g.Expect(errors.As(err, &differs)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(Equal(`service dns/designate existed before and is not this owner's: it has description "DNS", ` +
		`enabled true, where this spec says description "mine", enabled false, and it is never changed here`))
	svc := keystone.List(fakekeystone.Services, map[string]any{"id": id})[0]
	g.Expect(svc).To(HaveKeyWithValue("description", "DNS"))
	g.Expect(svc).To(HaveKeyWithValue("enabled", true))
	g.Expect(keystone.Requests()["PATCH /v3/services"]).To(Equal(before), "nothing written")

	reg, _, err := kc.EnsureService(ctx, "", identity.ServiceSpec{Type: "dns", Name: "designate", Description: "DNS", Enabled: true, Owner: tenant})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(reg.Ownership).To(Equal(identity.Adopted))
	_, ownership, err := kc.ServiceOwnership(ctx, id, tenant)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ownership).To(Equal(identity.Adopted), "adopted: no endpoint goes under it unless its KeystoneAPI says so")
}

// TestAdminNeverAUser: the client's own user, Keystone's admin, found under any name
// Keystone equates with its own (its database compares names without case), is never a
// service's: refused before any request that could set its password or try one.
func TestAdminNeverAUser(t *testing.T) {
	g := NewWithT(t)
	keystone, _, kc := adminOfFake(t)
	keystone.FoldNames()
	ctx := context.Background()
	before := keystone.Requests()
	_, _, err := kc.EnsureUser(ctx, identity.UserSpec{Name: "ADMIN", DomainID: "default", Password: "guess", PasswordFrom: "s#1", Owner: tenant})
	var admin *identity.AdminUserError
	g.Expect(errors.As(err, &admin)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(Equal("Keystone finds user admin for the name ADMIN: it is Keystone's admin, as which the operator " +
		"acts; a namespace never uses it"))
	after := keystone.Requests()
	g.Expect(after["POST /v3/auth"]).To(Equal(before["POST /v3/auth"]), "no password tried")
	g.Expect(after["PATCH /v3/users"]).To(Equal(before["PATCH /v3/users"]), "nothing written")
	_, err = kc.LookUpUser(ctx, "default", "Admin")
	g.Expect(errors.As(err, &admin)).To(BeTrue())

	id := keystone.List(fakekeystone.Users, map[string]any{"name": "admin"})[0]["id"].(string)
	u, err := kc.GetUser(ctx, id)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(kc.DeleteOwnedUser(ctx, u, tenant, true)).To(Succeed())
	g.Expect(keystone.List(fakekeystone.Users, map[string]any{"id": id})).To(HaveLen(1), "never deleted, whatever proof claims it")
	moved, err := kc.HandOverUser(ctx, "default", "admin", tenant, true, regionTwo)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(moved).To(BeFalse(), "never marked")
}

// TestRolesOfAnyCase: a role Keystone has under a name that differs by case alone is
// that role (no loop on a 409 for a role "not found"); a missing one is created only when
// allowed, else a MissingRolesError and nothing written.
func TestRolesOfAnyCase(t *testing.T) {
	g := NewWithT(t)
	keystone, _, kc := adminOfFake(t)
	keystone.FoldNames()
	ctx := context.Background()
	adminRole := keystone.List(fakekeystone.Roles, map[string]any{"name": "admin"})[0]["id"]
	ids, changed, err := kc.EnsureRoles(ctx, []string{"Admin"}, true)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeFalse())
	g.Expect(ids).To(Equal(map[string]string{"Admin": adminRole.(string)}))

	_, _, err = kc.EnsureRoles(ctx, []string{"admin", "observer", "auditor"}, false)
	var missing *identity.MissingRolesError
	g.Expect(errors.As(err, &missing)).To(BeTrue())
	g.Expect(missing.Roles).To(Equal([]string{"observer", "auditor"}))
	g.Expect(keystone.List(fakekeystone.Roles, map[string]any{"name": "observer"})).To(BeEmpty(), "not created")
	_, changed, err = kc.EnsureRoles(ctx, []string{"observer"}, true)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeTrue(), "created where allowed")
}

// TestLoginRefusedOnce: a login Keystone refused is not tried again with the same
// password from the same source, by Get or by Check; a new source (the Secret touched,
// another version) is tried once more.
func TestLoginRefusedOnce(t *testing.T) {
	g := NewWithT(t)
	keystone, clients, _ := adminOfFake(t)
	ctx := context.Background()
	wrong := identity.Credentials{URL: keystone.URL, User: "admin", Password: "guess", Project: "admin", Domain: "Default",
		Source: "uid-1/7#AdminPassword"}
	logins := func() int { return keystone.Requests()["POST /v3/auth"] }
	before := logins()
	_, err := clients.Get(ctx, wrong)
	refused, ok := identity.LoginRefused(err)
	g.Expect(ok).To(BeTrue(), "%v", err)
	g.Expect(refused.Earlier).To(BeFalse())
	g.Expect(identity.StatusCode(err)).To(Equal(http.StatusUnauthorized))
	for range 5 {
		_, err = clients.Get(ctx, wrong)
		refused, ok = identity.LoginRefused(err)
		g.Expect(ok).To(BeTrue())
		g.Expect(refused.Earlier).To(BeTrue())
		_, err = clients.Check(ctx, wrong)
		_, ok = identity.LoginRefused(err)
		g.Expect(ok).To(BeTrue())
	}
	g.Expect(logins()).To(Equal(before+1), "one refused login for this source")
	g.Expect(err.Error()).To(ContainSubstring("refused the password of user admin (at an earlier login); a refused password is " +
		"not tried again until its secret changes"))
	otherCA := fakekeystone.NewTLS("admin", "secret") // a CA bundle she wrote (docs/security.md, the CA bundle Secret)
	otherCA.Close()
	trusting := wrong
	trusting.CABundle = otherCA.CAPEM()
	_, err = clients.Get(ctx, trusting)
	refused, ok = identity.LoginRefused(err)
	g.Expect(ok).To(BeTrue(), "%v", err)
	g.Expect(refused.Earlier).To(BeTrue())
	g.Expect(logins()).To(Equal(before+1), "another CA bundle: not tried again")

	wrong.Source = "uid-1/8#AdminPassword"
	_, err = clients.Get(ctx, wrong)
	_, ok = identity.LoginRefused(err)
	g.Expect(ok).To(BeTrue())
	g.Expect(logins()).To(Equal(before+2), "a new version of the secret: tried once")
	right := wrong
	right.Password, right.Source = "secret", "uid-1/9#AdminPassword"
	_, err = clients.Check(ctx, right)
	g.Expect(err).NotTo(HaveOccurred())

	// The admin fixes the password in Keystone and touches the KeystoneAPI: its check
	// tries again (another source), works, and the registrations' refusal is cleared.
	keystone.SetPassword("admin", "guess")
	touched := wrong
	touched.Source += " check touched"
	_, err = clients.Check(ctx, touched)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = clients.Get(ctx, wrong)
	g.Expect(err).NotTo(HaveOccurred(), "a login that works clears the refusals of that password")
}

// TestLoginAgainGuarded: a session whose token Keystone stops honouring logs in again
// with its password, once: a refusal is remembered, and the next request does not try.
func TestLoginAgainGuarded(t *testing.T) {
	g := NewWithT(t)
	keystone, clients, _ := adminOfFake(t)
	ctx := context.Background()
	creds := identity.Credentials{URL: keystone.URL, User: "admin", Password: "secret", Project: "admin", Domain: "Default", Source: "s#1"}
	kc, err := clients.Get(ctx, creds)
	g.Expect(err).NotTo(HaveOccurred())
	keystone.SetPassword("admin", "changed-elsewhere")
	keystone.ExpireTokens()
	logins := keystone.Requests()["POST /v3/auth"]
	_, err = kc.FindUserID(ctx, "default", "admin")
	_, ok := identity.LoginRefused(err)
	g.Expect(ok).To(BeTrue(), "%v", err)
	var reauth *gophercloud.ErrUnableToReauthenticate
	g.Expect(errors.As(err, &reauth)).To(BeTrue(), "gophercloud's own error, unwrapped by LoginRefused")
	for range 3 {
		_, err = kc.FindUserID(ctx, "default", "admin")
		_, ok = identity.LoginRefused(err)
		g.Expect(ok).To(BeTrue())
	}
	g.Expect(keystone.Requests()["POST /v3/auth"]).To(Equal(logins+1), "logged in again once")
	_, err = clients.Get(ctx, creds)
	_, ok = identity.LoginRefused(err)
	g.Expect(ok).To(BeTrue(), "and Get remembers it")
	g.Expect(identity.Unreachable(err, keystone.URL)).To(BeTrue(), "a refused login counts as Keystone refusing the operator")
}

// TestRevokedAtTheOwnersPath: the admin revokes a user's application credential at that
// user's path, as the API is documented, not at its own.
func TestRevokedAtTheOwnersPath(t *testing.T) {
	g := NewWithT(t)
	keystone, clients, admin := adminOfFake(t)
	ctx := context.Background()
	userID := keystone.Create(fakekeystone.Users, map[string]any{"name": "glance", "domain_id": "default", "password": "pw",
		"enabled": true})
	keystone.Create(fakekeystone.Projects, map[string]any{"name": "service", "domain_id": "default"})
	glance, err := clients.Get(ctx, identity.Credentials{URL: keystone.URL, User: "glance", Password: "pw", Project: "service", Domain: "Default"})
	g.Expect(err).NotTo(HaveOccurred())
	cred, err := glance.CreateAppCred(ctx, identity.AppCredSpec{Name: "ac-glance", Owner: tenant})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(admin.DeleteAppCred(ctx, cred.ID)).To(Succeed())
	g.Expect(keystone.Revoked()).To(Equal([]string{userID + "/" + cred.ID}))
	g.Expect(admin.DeleteAppCred(ctx, cred.ID)).To(Succeed(), "one already gone is fine")
	g.Expect(keystone.Revoked()).To(HaveLen(1), "and not asked again")
}

// TestRefusalsOfOneUserKeepOthers: however many refused logins one user piles up (a
// tenant rewriting her own Secret), another user's refusal is still remembered.
func TestRefusalsOfOneUserKeepOthers(t *testing.T) {
	g := NewWithT(t)
	keystone, clients, _ := adminOfFake(t)
	ctx := context.Background()
	keystone.Create(fakekeystone.Users, map[string]any{"name": "tenant-a-x", "domain_id": "default", "password": "pw", "enabled": true})
	admin := identity.Credentials{URL: keystone.URL, User: "admin", Password: "stale", Project: "admin", Domain: "Default", Source: "s#1"}
	_, err := clients.Get(ctx, admin)
	_, ok := identity.LoginRefused(err)
	g.Expect(ok).To(BeTrue())
	for i := range 100 {
		_, err := clients.Get(ctx, identity.Credentials{URL: keystone.URL, User: "tenant-a-x", Password: "guess", Project: "admin",
			Domain: "Default", Source: fmt.Sprintf("v#%d", i)})
		_, ok := identity.LoginRefused(err)
		g.Expect(ok).To(BeTrue())
	}
	logins := keystone.Requests()["POST /v3/auth"]
	_, err = clients.Get(ctx, admin)
	refused, ok := identity.LoginRefused(err)
	g.Expect(ok).To(BeTrue())
	g.Expect(refused.Earlier).To(BeTrue(), "still remembered")
	g.Expect(keystone.Requests()["POST /v3/auth"]).To(Equal(logins), "not tried again")
}
