package tenant

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/roles"
	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/tests/support/keystoneadmin"
	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// conditionsOf are obj's conditions and the generation they describe.
func conditionsOf(obj client.Object) (lc.Conditions, int64) {
	switch o := obj.(type) {
	case *keystonev1.KeystoneService:
		return o.Status.Conditions, o.Status.ObservedGeneration
	case *keystonev1.KeystoneEndpoint:
		return o.Status.Conditions, o.Status.ObservedGeneration
	case *keystonev1.KeystoneApplicationCredential:
		return o.Status.Conditions, o.Status.ObservedGeneration
	case *keystonev1.KeystoneAPI:
		return o.Status.Conditions, o.Status.ObservedGeneration
	}
	panic(fmt.Sprintf("no conditions in %T", obj))
}

// waitReady waits until obj, as c reads it, is Ready for its current generation.
func waitReady(ctx context.Context, c client.Client, obj client.Object) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, poll, within, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err
		}
		conditions, observed := conditionsOf(obj)
		if ready := conditions.Get(lc.ReadyCondition); ready != nil {
			last = ready.Message
		}
		return observed == obj.GetGeneration() && conditions.IsTrue(lc.ReadyCondition), nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %T %s to be Ready (last: %q): %w", obj, obj.GetName(), last, err)
	}
	return nil
}

// expectCondition waits until condition t of obj, as c reads it for its current
// generation, has status and reason, and returns its message.
func expectCondition(t *testing.T, c client.Client, obj client.Object, typ lc.Type, status corev1.ConditionStatus, reason string) string {
	t.Helper()
	var message string
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)).To(Succeed())
		conditions, observed := conditionsOf(obj)
		g.Expect(observed).To(Equal(obj.GetGeneration()))
		got := conditions.Get(typ)
		g.Expect(got).NotTo(BeNil(), "no condition %s", typ)
		message = got.Message
		g.Expect(got.Status).To(Equal(status), "%s: %s", typ, got.Message)
		g.Expect(string(got.Reason)).To(Equal(reason), "%s: %s", typ, got.Message)
	}, within, poll).Should(Succeed(), "%T %s/%s", obj, obj.GetNamespace(), obj.GetName())
	return message
}

// expectReady waits until obj is Ready for its current generation, as c reads it.
func expectReady(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	NewWithT(t).Expect(waitReady(context.Background(), c, obj)).To(Succeed())
}

// create creates obj as c (a tenant), failing t when the API server refuses; obj is
// deleted when t ends, so that a test that fails half-way leaves the next one a clean
// namespace, and t fails when it is still there after within (a finalizer kept).
func create(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	NewWithT(t).Expect(c.Create(context.Background(), obj)).To(Succeed())
	key := client.ObjectKeyFromObject(obj)
	fresh := obj.DeepCopyObject().(client.Object)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), within)
		defer cancel()
		if err := c.Delete(ctx, fresh); apierrors.IsNotFound(err) {
			return
		}
		if err := wait.PollUntilContextCancel(ctx, poll, true, func(ctx context.Context) (bool, error) {
			return apierrors.IsNotFound(c.Get(ctx, key, fresh)), nil
		}); err != nil {
			t.Errorf("%T %s is still there %s after its deletion, finalizers %v", fresh, key, within, fresh.GetFinalizers())
		}
	})
}

// touch changes an annotation of obj as c, times times, each a new resourceVersion (and
// a round of the operator): what a tenant does to make the operator try again.
func touch(t *testing.T, c client.Client, obj client.Object, times int) {
	t.Helper()
	for i := range times {
		NewWithT(t).Eventually(func() error {
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
				return err
			}
			annotations := obj.GetAnnotations()
			if annotations == nil {
				annotations = map[string]string{}
			}
			annotations["tenant.example.com/touch"] = fmt.Sprint(i, time.Now().UnixNano())
			obj.SetAnnotations(annotations)
			return c.Update(context.Background(), obj)
		}, within, poll).Should(Succeed())
		time.Sleep(300 * time.Millisecond)
	}
}

// deleted deletes obj as c and waits until it is gone.
func deleted(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	g := NewWithT(t)
	g.Expect(client.IgnoreNotFound(c.Delete(context.Background(), obj))).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj))
	}, within, poll).Should(BeTrue(), "%T %s is deleted", obj, obj.GetName())
}

// secret is a Secret of namespace ns with data, as a tenant writes it.
func secret(ns, name string, data map[string]string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, StringData: data}
}

// service is a KeystoneService of namespace ns: type, name, user, its password in the
// Secret passwords under key, and roles (the CRD's default, keystone-operator's admin
// and service, when none).
func service(ns, serviceType, name, user, key string, roles ...string) *keystonev1.KeystoneService {
	return &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: keystonev1.KeystoneServiceSpec{ServiceType: serviceType, ServiceName: name, ServiceUser: user,
			Secret: "passwords", PasswordSelector: key, Roles: roles}}
}

// credential is a KeystoneApplicationCredential of namespace ns for user, its password in
// the Secret passwords under key, with role service.
func credential(ns, name, user, key string) *keystonev1.KeystoneApplicationCredential {
	return &keystonev1.KeystoneApplicationCredential{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
		Annotations: map[string]string{keystonev1.EDPMServiceAnnotation: "false"}},
		Spec: keystonev1.KeystoneApplicationCredentialSpec{UserName: user, Secret: "passwords", PasswordSelector: key,
			Roles: []string{"service"}, ExpirationDays: 365, GracePeriodDays: 182}}
}

// mustLogIn fails t unless user logs in with password: not locked out, password as it was.
func (w *world) mustLogIn(t *testing.T, user, password string) {
	t.Helper()
	if err := keystoneadmin.Login(context.Background(), w.url, w.ca, user, password); err != nil {
		t.Fatalf("user %s cannot log in with its password: %v", user, err)
	}
}

// entities lists Keystone's collection kind ("services", "users", "endpoints", "roles")
// filtered by query ("name=glance"), each entity as Keystone returns it.
func (w *world) entities(t *testing.T, kind, query string) []map[string]any {
	t.Helper()
	url := w.admin.ServiceURL(kind)
	if query != "" {
		url += "?" + query
	}
	var body map[string]json.RawMessage
	resp, err := w.admin.Get(context.Background(), url, &body, nil)
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
	if err != nil {
		t.Fatalf("listing %s: %v", kind, err)
	}
	var out []map[string]any
	if err := json.Unmarshal(body[kind], &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// entity reads one entity of kind by ID, nil when it is gone.
func (w *world) entity(t *testing.T, kind, id string) map[string]any {
	t.Helper()
	var body map[string]map[string]any
	resp, err := w.admin.Get(context.Background(), w.admin.ServiceURL(kind, id), &body, nil)
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
	if gophercloud.ResponseCodeIs(err, 404) {
		return nil
	}
	if err != nil {
		t.Fatalf("reading %s %s: %v", kind, id, err)
	}
	return body[strings.TrimSuffix(kind, "s")]
}

// names are the values of field of each entity.
func names(entities []map[string]any, field string) []string {
	out := []string{}
	for _, e := range entities {
		out = append(out, fmt.Sprint(e[field]))
	}
	slices.Sort(out)
	return out
}

// urls are the URLs of the endpoints of the service with ID serviceID.
func (w *world) urls(t *testing.T, serviceID string) []string {
	t.Helper()
	return names(w.entities(t, "endpoints", "service_id="+serviceID), "url")
}

// userRoles are the names of user's roles on the project service.
func (w *world) userRoles(t *testing.T, user string) []string {
	t.Helper()
	found := w.entities(t, "users", "name="+user)
	if len(found) == 0 {
		return nil
	}
	project, err := projectID(context.Background(), w.admin, "service")
	if err != nil {
		t.Fatal(err)
	}
	pages, err := roles.ListAssignments(w.admin, roles.ListAssignmentsOpts{UserID: fmt.Sprint(found[0]["id"]),
		ScopeProjectID: project, IncludeNames: ptr.To(true)}).AllPages(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	assigned, err := roles.ExtractRoleAssignments(pages)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, a := range assigned {
		out = append(out, a.Role.Name)
	}
	slices.Sort(out)
	return out
}

// catalogURLs are the URLs of serviceType a token of user (scoped to project) lists in
// its catalog: what every client of the cloud is given.
func (w *world) catalogURLs(t *testing.T, user, password, project, serviceType string) []string {
	t.Helper()
	c, err := keystoneadmin.Client(context.Background(), w.url, w.ca, user, password, project)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Catalog []struct {
			Type      string `json:"type"`
			Endpoints []struct {
				URL string `json:"url"`
			} `json:"endpoints"`
		} `json:"catalog"`
	}
	resp, err := c.Get(context.Background(), c.ServiceURL("auth", "catalog"), &body, nil)
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, s := range body.Catalog {
		if s.Type == serviceType {
			for _, e := range s.Endpoints {
				out = append(out, e.URL)
			}
		}
	}
	slices.Sort(out)
	return out
}

// roleID is the ID of the role name.
func roleID(ctx context.Context, c *gophercloud.ServiceClient, name string) (string, error) {
	pages, err := roles.List(c, roles.ListOpts{Name: name}).AllPages(ctx)
	if err != nil {
		return "", err
	}
	all, err := roles.ExtractRoles(pages)
	if err != nil {
		return "", err
	}
	if len(all) == 0 {
		return "", fmt.Errorf("no role %s", name)
	}
	return all[0].ID, nil
}

// projectID is the ID of the project name of the default domain.
func projectID(ctx context.Context, c *gophercloud.ServiceClient, name string) (string, error) {
	pages, err := projects.List(c, projects.ListOpts{Name: name, DomainID: "default"}).AllPages(ctx)
	if err != nil {
		return "", err
	}
	all, err := projects.ExtractProjects(pages)
	if err != nil {
		return "", err
	}
	if len(all) == 0 {
		return "", fmt.Errorf("no project %s", name)
	}
	return all[0].ID, nil
}
