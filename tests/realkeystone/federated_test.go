package realkeystone

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/tests/support/controlplane"
	"github.com/keystone-stepwise/keystone-operator/tests/support/localkeystone"
	. "github.com/onsi/gomega"
)

// keystoneCall is one request to Keystone's API with a token (none when empty): its
// status, its body decoded, and the X-Subject-Token it answered.
func keystoneCall(ctx context.Context, g Gomega, method, url, token string, body any, header map[string]string) (int, map[string]any, string) {
	var in io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		g.Expect(err).NotTo(HaveOccurred())
		in = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, in)
	g.Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("X-Auth-Token", token)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	g.Expect(err).NotTo(HaveOccurred())
	out := map[string]any{}
	if len(data) > 0 {
		_ = json.Unmarshal(data, &out)
	}
	return resp.StatusCode, out, resp.Header.Get("X-Subject-Token")
}

// field is the string at path in a decoded answer ("" when absent).
func field(m map[string]any, path ...string) string {
	var v any = m
	for _, p := range path {
		obj, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = obj[p]
	}
	s, _ := v.(string)
	return s
}

// TestFederatedUserBesideCreated checks on a real Keystone what docs/registrations.md
// says of a federated user whose name a new KeystoneService's user takes: Keystone's
// names are unique among local users only, so the create that comes first (UserSpec.New)
// makes a local user beside the federated one instead of failing; every later look-up
// finds the local user; its deletion removes that one; and the federated user's logins
// and roles are untouched throughout. The look-up first finds the federated user
// (when no local user has the name) and passes over it to the same end: Keystone
// answers a password login of it with an error (500), not a refusal. A local user given
// federated identities (by the admin, through the API) holds its name and is never
// taken: the create fails and says why, and nothing of it changes.
//
// The federated user is made as Keystone makes one: a login through the mapped method
// (on by default in Keystone's [auth] methods) at an identity provider of the service
// users' domain, its assertion read from the request's environment, where the
// headers are (Keystone reads every variable when [federation] assertion_prefix is
// empty, its default, and checks no remote ID when the provider has none).
func TestFederatedUserBesideCreated(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	stack, err := localkeystone.StartStack(ctx, t.TempDir(), testKeystoneAPI(), adminPassword)
	controlplane.Unavailable(t, err)
	g.Expect(err).NotTo(HaveOccurred())
	defer stack.Stop()
	defer func() {
		if t.Failed() {
			t.Log(stack.Logs())
		}
	}()
	v3 := stack.Keystone.URL() + "/v3"
	_, admin := authenticate(ctx, g, stack.Keystone.URL())
	call := func(method, path string, body any, want int) map[string]any {
		t.Helper()
		code, out, _ := keystoneCall(ctx, g, method, v3+path, admin, body, nil)
		g.Expect(code).To(Equal(want), "%s %s: %v", method, path, out)
		return out
	}

	t.Log("an identity provider of the Default domain, mapping a header to a user and a group")
	group := field(call(http.MethodPost, "/groups", map[string]any{"group": map[string]any{"name": "federated", "domain_id": "default"}},
		http.StatusCreated), "group", "id")
	call(http.MethodPut, "/OS-FEDERATION/identity_providers/test-idp",
		map[string]any{"identity_provider": map[string]any{"enabled": true, "domain_id": "default"}}, http.StatusCreated)
	call(http.MethodPut, "/OS-FEDERATION/mappings/test-mapping", map[string]any{"mapping": map[string]any{"rules": []any{
		map[string]any{
			"local":  []any{map[string]any{"user": map[string]any{"name": "{0}"}}, map[string]any{"group": map[string]any{"id": group}}},
			"remote": []any{map[string]any{"type": "HTTP_X_TEST_USER"}},
		},
	}}}, http.StatusCreated)
	call(http.MethodPut, "/OS-FEDERATION/identity_providers/test-idp/protocols/mapped",
		map[string]any{"protocol": map[string]any{"mapping_id": "test-mapping"}}, http.StatusCreated)
	federatedLogin := func() string {
		t.Helper()
		code, out, token := keystoneCall(ctx, g, http.MethodPost, v3+"/OS-FEDERATION/identity_providers/test-idp/protocols/mapped/auth",
			"", nil, map[string]string{"X-Test-User": "glance"})
		g.Expect(code).To(Equal(http.StatusCreated), "the federated login: %v", out)
		g.Expect(token).NotTo(BeEmpty())
		return field(out, "token", "user", "id")
	}
	federated := federatedLogin()
	g.Expect(federated).NotTo(BeEmpty())
	fed := call(http.MethodGet, "/users/"+federated, nil, http.StatusOK)
	g.Expect(field(fed, "user", "name")).To(Equal("glance"))
	g.Expect(field(fed, "user", "domain_id")).To(Equal("default"), "a federated user in the service users' domain")

	t.Log("the federated user has a role of its own")
	projects := call(http.MethodGet, "/projects?name=admin", nil, http.StatusOK)["projects"].([]any)
	g.Expect(projects).To(HaveLen(1))
	projectID := projects[0].(map[string]any)["id"].(string)
	roles := call(http.MethodGet, "/roles?name=reader", nil, http.StatusOK)["roles"].([]any)
	g.Expect(roles).To(HaveLen(1))
	readerID := roles[0].(map[string]any)["id"].(string)
	call(http.MethodPut, fmt.Sprintf("/projects/%s/users/%s/roles/%s", projectID, federated, readerID), nil, http.StatusNoContent)
	federatedRoles := func() []any {
		t.Helper()
		return call(http.MethodGet, "/role_assignments?user.id="+federated, nil, http.StatusOK)["role_assignments"].([]any)
	}
	g.Expect(federatedRoles()).To(HaveLen(1))

	clients := &identity.Clients{Transport: identity.NewTransport()}
	kc, err := clients.Get(ctx, identity.Credentials{URL: stack.Keystone.URL(), User: "admin", Password: adminPassword,
		Project: "admin", Domain: "Default"})
	g.Expect(err).NotTo(HaveOccurred())
	const owner = "KeystoneService/openstack/glance/uid-1@cluster-one"
	want := identity.UserSpec{Name: "glance", DomainID: "default", Password: "glance-Pa55", PasswordFrom: "secret-uid/1#GlancePassword", Owner: owner}

	localUsers := func() []string {
		t.Helper()
		var ids []string
		for _, u := range call(http.MethodGet, "/users?name=glance&domain_id=default", nil, http.StatusOK)["users"].([]any) {
			if id := u.(map[string]any)["id"].(string); id != federated {
				ids = append(ids, id)
			}
		}
		return ids
	}

	t.Log("Keystone answers a password login of the federated user with an error, not a refusal")
	_, err = kc.PasswordWorks(ctx, federated, want.Password)
	g.Expect(err).To(HaveOccurred(), "Keystone 22.0.2: 500, its SQL backend reading the local user the federated one has none of")

	t.Log("looked up first, the name finds the federated user, which is passed over: a local user is made beside it")
	other := want
	other.Owner = "KeystoneService/openstack/glance-other/uid-0@cluster-one"
	reg, changed, err := kc.EnsureUser(ctx, other)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeTrue())
	g.Expect(reg.Created).To(BeTrue())
	g.Expect(localUsers()).To(Equal([]string{reg.ID}))
	g.Expect(kc.DeleteUserNamed(ctx, "default", "glance", other.Owner, false)).To(Succeed())
	g.Expect(localUsers()).To(BeEmpty(), "its deletion removed the local user")
	call(http.MethodGet, "/users/"+federated, nil, http.StatusOK)

	t.Log("created first, a local user of the name is made beside the federated one")
	first := want
	first.New = true
	reg, changed, err = kc.EnsureUser(ctx, first)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeTrue())
	g.Expect(reg.Created).To(BeTrue())
	g.Expect(reg.Ownership).To(Equal(identity.Owned))
	users := call(http.MethodGet, "/users?name=glance&domain_id=default", nil, http.StatusOK)["users"].([]any)
	g.Expect(users).To(HaveLen(2))
	g.Expect(users[0].(map[string]any)["id"]).To(Equal(reg.ID), "Keystone lists the local user first")
	found, err := kc.LookUpUser(ctx, "default", "glance")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(found.ID).To(Equal(reg.ID), "the operator's look-up finds the local user")
	works, err := kc.PasswordWorks(ctx, reg.ID, want.Password)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(works).To(BeTrue(), "the local user has the Secret's password")

	t.Log("a later round looks up first and finds its own user")
	again, changed, err := kc.EnsureUser(ctx, want)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeFalse())
	g.Expect(again.ID).To(Equal(reg.ID))
	g.Expect(again.Ownership).To(Equal(identity.Owned))
	g.Expect(federatedLogin()).To(Equal(federated), "the federated user still logs in, as itself")
	g.Expect(federatedRoles()).To(HaveLen(1))

	t.Log("the deletion removes the local user only")
	g.Expect(kc.DeleteUserNamed(ctx, "default", "glance", owner, false)).To(Succeed())
	call(http.MethodGet, "/users/"+reg.ID, nil, http.StatusNotFound)
	call(http.MethodGet, "/users/"+federated, nil, http.StatusOK)
	g.Expect(federatedRoles()).To(HaveLen(1), "the federated user's role stays")
	g.Expect(federatedLogin()).To(Equal(federated))

	t.Log("a local user given federated identities holds its name, and is never taken")
	person := field(call(http.MethodPost, "/users", map[string]any{"user": map[string]any{"name": "person", "domain_id": "default",
		"password": "person-Pa55", "federated": []any{map[string]any{"idp_id": "test-idp",
			"protocols": []any{map[string]any{"protocol_id": "mapped", "unique_id": "person-at-idp"}}}}}}, http.StatusCreated), "user", "id")
	for _, createFirst := range []bool{false, true} {
		spec := want
		spec.Name, spec.New, spec.ClaimUnmarked = "person", createFirst, true
		_, _, err := kc.EnsureUser(ctx, spec)
		g.Expect(err).To(MatchError(&identity.FederatedUserError{Name: spec.Name}))
	}
	found, err = kc.LookUpUser(ctx, "default", "person")
	g.Expect(err).To(MatchError(&identity.FederatedUserError{Name: "person"}))
	g.Expect(found).To(BeNil())
	g.Expect(kc.DeleteUserNamed(ctx, "default", "person", owner, true)).To(Succeed())
	left := call(http.MethodGet, "/users/"+person, nil, http.StatusOK)
	g.Expect(left["user"]).NotTo(HaveKey(identity.OwnerAttribute), "left as it was")
	works, err = kc.PasswordWorks(ctx, person, "person-Pa55")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(works).To(BeTrue(), "its password as it was")
}
