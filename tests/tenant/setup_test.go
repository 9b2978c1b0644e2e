// Package tenant tries every row of docs/security.md as a tenant would: a user with only
// a RoleBinding in her own namespace, on an API server with RBAC on, the operator running
// with the roles config/rbac generates, her namespace's external KeystoneAPI (made by the
// admin, following docs/security.md's recipe) pointing at a real Keystone over TLS that
// another namespace and another cluster share, with people the admin made by hand, and
// Keystone's lockout on. Every outcome is judged in Keystone, as its admin sees it.
package tenant

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/applicationcredentials"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/endpoints"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/roles"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/services"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/users"
	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/cmd/manager"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/tests/support/controlplane"
	"github.com/keystone-stepwise/keystone-operator/tests/support/keystoneadmin"
	"github.com/keystone-stepwise/keystone-operator/tests/support/localkeystone"
	"github.com/keystone-stepwise/keystone-operator/tests/support/testutil"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

const (
	adminPassword = "admin-Pa55word"
	// lockoutAttempts is Keystone's [security_compliance] lockout_failure_attempts here:
	// two refused logins in a row lock a user out, so a second refused try of any
	// password the operator makes shows as a user that can no longer log in.
	lockoutAttempts = 2
	// The namespaces: the admin's own, where glance is registered; alice's, handed to a
	// tenant by docs/security.md's recipe; bob's, whose KeystoneAPI keeps the defaults
	// (keystone-operator's: its writers are Keystone's admin) and the admin's own login.
	victim  = "openstack"
	tenantA = "tenant-a"
	tenantB = "tenant-b"
	// operatorA is the admin user tenant-a's KeystoneAPI acts as (the recipe: a user of
	// its own, so that a lockout of it stops that namespace alone).
	operatorA = "tenant-a-operator"
	// cluster is this cluster's identity in the marks; elsewhere another cluster's.
	cluster   = "cluster-here"
	elsewhere = "cluster-elsewhere"
	// regionRecheck is the operator's --region-recheck here: the regions' watch looks
	// at Keystone every 2 s.
	regionRecheck = 2 * time.Second
	within        = 90 * time.Second
	poll          = 200 * time.Millisecond
)

// world is what every test of the package shares: one Keystone, one API server with the
// operator, the admin's namespace with glance, the two tenants, the people.
type world struct {
	url string
	ca  []byte
	// admin is Keystone's admin; cluster the API server's.
	admin   *gophercloud.ServiceClient
	cluster client.Client
	// alice and bob are the tenants of tenant-a and tenant-b.
	alice, bob client.Client
	people     people
	stack      *localkeystone.Stack
	// operator stops the operator that runs (restart).
	operator func()
	opCfg    *rest.Config
}

// people are what the admin made in Keystone by hand, and another cluster registered.
type people struct {
	// carol (a person) with her own application credential.
	carolID, carolCredID, carolCredSecret string
	// opsAdmin is a second admin; designate a service made by hand with its endpoint;
	// legacy one made by hand under a name tenant-a may use; cinder the block storage
	// service, made by hand under one of its type's aliases (volumev3).
	opsAdminID, designateID, legacyID, cinderID string
	// nova's service and user, another cluster's openstack/nova registered them.
	novaServiceID, novaUserID string
}

var (
	once     sync.Once
	shared   *world
	startErr error
	stops    []func()
)

func TestMain(m *testing.M) {
	code := m.Run()
	for i := len(stops) - 1; i >= 0; i-- {
		stops[i]()
	}
	os.Exit(code)
}

// env starts the world at the first test that needs it; a test run without
// KUBEBUILDER_ASSETS (go test ./... alone) skips where a part is not installed.
func env(t *testing.T) *world {
	t.Helper()
	once.Do(func() { shared, startErr = start() })
	controlplane.Unavailable(t, startErr)
	if startErr != nil {
		t.Fatal(startErr)
	}
	return shared
}

func start() (*world, error) {
	// TENANT_LOG=<file> keeps what the operator logs, for a failure to be read.
	log := io.Writer(io.Discard)
	if path := os.Getenv("TENANT_LOG"); path != "" {
		f, err := os.Create(filepath.Clean(path))

		if err != nil {
			return nil, err
		}
		stops = append(stops, func() { _ = f.Close() })
		log = f
	}
	logf.SetLogger(zap.New(zap.WriteTo(log), zap.UseDevMode(os.Getenv("TENANT_LOG") != "")))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	w := &world{}
	if err := w.startKeystone(ctx); err != nil {
		return nil, err
	}
	if err := w.makePeople(ctx); err != nil {
		return nil, fmt.Errorf("making Keystone's people: %w\n%s", err, w.stack.Logs())
	}
	if err := w.startCluster(); err != nil {
		return nil, err
	}
	if err := w.makeNamespaces(ctx); err != nil {
		return nil, err
	}
	return w, nil
}

// startKeystone starts Keystone over TLS with its lockout on.
func (w *world) startKeystone(ctx context.Context) error {
	ca, err := testutil.NewCA("tenant-keystone-ca")
	if err != nil {
		return err
	}
	cert, key, err := ca.Issue("127.0.0.1")
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "tenant-keystone-")
	if err != nil {
		return err
	}
	stops = append(stops, func() { _ = os.RemoveAll(dir) })
	api := &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Namespace: "shared"},
		Spec: keystonev1.KeystoneAPISpec{ContainerImage: "keystone", Secret: "osp-secret", DatabaseInstance: "openstack",
			DatabaseAccount: "keystone", MemcachedInstance: "memcached", Region: "regionOne", AdminProject: "admin", AdminUser: "admin",
			PasswordSelectors: keystonev1.PasswordSelector{Admin: "AdminPassword"}, FernetMaxActiveKeys: ptr.To[int32](5),
			CustomServiceConfig: fmt.Sprintf("[security_compliance]\nlockout_failure_attempts = %d\nlockout_duration = 3600\n",
				lockoutAttempts)}}
	w.stack, err = localkeystone.StartStack(ctx, filepath.Join(dir, "keystone"), api, adminPassword,
		localkeystone.WithTLS(localkeystone.TLS{Cert: cert, Key: key, CA: ca.PEM}))
	if err != nil {
		return err
	}
	stops = append(stops, w.stack.Stop)
	w.url, w.ca = w.stack.Keystone.URL(), ca.PEM
	w.admin, err = keystoneadmin.Client(ctx, w.url, w.ca, "admin", adminPassword, "admin")
	return err
}

// makePeople makes, as Keystone's admin, what a cloud holds besides the operator's
// registrations: a person (carol) with her own application credential, a second admin,
// the admin user tenant-a's KeystoneAPI acts as, a service made by hand with its
// endpoint, one under a name tenant-a may use, and another cluster's registration of nova.
func (w *world) makePeople(ctx context.Context) error {
	if err := w.makeUsers(ctx); err != nil {
		return err
	}
	return w.makeServices(ctx)
}

// novaMark is the mark another cluster's openstack/nova left on nova's service and user.
const novaMark = "KeystoneService/openstack/nova/uid-nova@" + elsewhere

// makeUsers makes carol with her credential, ops-admin, tenant-a-operator and nova.
func (w *world) makeUsers(ctx context.Context) error {
	adminRole, err := roleID(ctx, w.admin, "admin")
	if err != nil {
		return err
	}
	memberRole, err := roleID(ctx, w.admin, "member")
	if err != nil {
		return err
	}
	adminProject, err := projectID(ctx, w.admin, "admin")
	if err != nil {
		return err
	}
	project, err := projects.Create(ctx, w.admin, projects.CreateOpts{Name: "carol-project", DomainID: "default"}).Extract()
	if err != nil {
		return err
	}
	p := &w.people
	for _, u := range []struct {
		id                                *string
		name, password, projectID, roleID string
		extra                             map[string]any
	}{
		{&p.carolID, "carol", "carol-pw", project.ID, memberRole, nil},
		{&p.opsAdminID, "ops-admin", "ops-admin-pw", adminProject, adminRole, nil},
		{new(string), operatorA, "tenant-a-operator-pw", adminProject, adminRole, nil},
		{&p.novaUserID, "nova", "nova-pw", "", "", map[string]any{identity.OwnerAttribute: novaMark}},
	} {
		if *u.id, err = w.newUser(ctx, u.name, u.password, u.projectID, u.roleID, u.extra); err != nil {
			return err
		}
	}
	carol, err := keystoneadmin.Client(ctx, w.url, w.ca, "carol", "carol-pw", "carol-project")
	if err != nil {
		return err
	}
	cred, err := applicationcredentials.Create(ctx, carol, p.carolID, applicationcredentials.CreateOpts{Name: "carol-laptop"}).Extract()
	if err != nil {
		return err
	}
	p.carolCredID, p.carolCredSecret = cred.ID, cred.Secret
	return nil
}

// newUser creates a user of the default domain with extra attributes, and gives it the
// role roleID on the project projectID (none when empty); it returns the user's ID.
func (w *world) newUser(ctx context.Context, name, password, projectID, roleID string, extra map[string]any) (string, error) {
	u, err := users.Create(ctx, w.admin, users.CreateOpts{Name: name, Password: password, DomainID: "default", Extra: extra}).Extract()
	if err != nil {
		return "", fmt.Errorf("creating user %s: %w", name, err)
	}
	if roleID != "" {
		if err := roles.Assign(ctx, w.admin, roleID, roles.AssignOpts{UserID: u.ID, ProjectID: projectID}).ExtractErr(); err != nil {
			return "", err
		}
	}
	return u.ID, nil
}

// makeServices makes dns/designate with its endpoint, object-store/tenant-a-legacy, and
// another cluster's compute/nova.
func (w *world) makeServices(ctx context.Context) error {
	p := &w.people
	var err error
	for _, svc := range []struct {
		id                         *string
		serviceType, name, summary string
		extra                      map[string]any
	}{
		{&p.designateID, "dns", "designate", "Designate DNS", nil},
		{&p.legacyID, "object-store", "tenant-a-legacy", "Legacy objects", nil},
		{&p.cinderID, "volumev3", "cinderv3", "Cinder", nil},
		{&p.novaServiceID, "compute", "nova", "Nova", map[string]any{identity.OwnerAttribute: novaMark}},
	} {
		extra := map[string]any{"name": svc.name, "description": svc.summary}
		for k, v := range svc.extra {
			extra[k] = v
		}
		s, err := services.Create(ctx, w.admin, services.CreateOpts{Type: svc.serviceType, Extra: extra}).Extract()
		if err != nil {
			return fmt.Errorf("creating service %s/%s: %w", svc.serviceType, svc.name, err)
		}
		*svc.id = s.ID
	}
	_, err = endpoints.Create(ctx, w.admin, endpoints.CreateOpts{Availability: gophercloud.AvailabilityPublic, Region: "regionOne",
		URL: "https://dns.example.com", ServiceID: p.designateID}).Extract()
	return err
}

// startCluster starts the API server and the operator in it, with config/rbac's roles.
func (w *world) startCluster() error {
	root, err := controlplane.RepoRoot()
	if err != nil {
		return err
	}
	env, err := controlplane.Environment(root)
	if err != nil {
		return err
	}
	cfg, err := env.Start()
	if err != nil {
		return err
	}
	stops = append(stops, func() { _ = env.Stop() })
	if w.opCfg, err = controlplane.AsOperator(context.Background(), cfg, root); err != nil {
		return err
	}
	if err := w.startOperator(); err != nil {
		return err
	}
	stops = append(stops, func() { w.operator() })
	if w.cluster, err = client.New(cfg, client.Options{Scheme: manager.Scheme}); err != nil {
		return err
	}
	as := func(user string) (client.Client, error) {
		c := rest.CopyConfig(cfg)
		c.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
		return client.New(c, client.Options{Scheme: manager.Scheme})
	}
	if w.alice, err = as("alice"); err != nil {
		return err
	}
	w.bob, err = as("bob")
	return err
}

// startOperator starts the operator, with the permissions of config/rbac; w.operator
// stops it, and returns once it stopped.
func (w *world) startOperator() error {
	// Isolated: a restarted one is a second manager of this process.
	mgr, err := manager.New(w.opCfg, manager.Options{MetricsAddr: "0", ProbeAddr: "0", ClusterID: cluster, RegionRecheck: regionRecheck,
		Isolated: true})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background()) //nolint:gosec // w.operator cancels it
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	w.operator = func() { cancel(); <-done }
	return nil
}

// restart stops the operator and starts a new one, as a new process would: nothing of
// the first one's memory (its Keystone sessions, the logins Keystone refused) is kept.
func (w *world) restart(t *testing.T) {
	t.Helper()
	stop := w.operator
	w.operator = func() {} // until the new one runs: the suite's stop must not wait for the old one again
	stop()
	if err := w.startOperator(); err != nil {
		t.Fatalf("starting the operator again: %v", err)
	}
}

// makeNamespaces makes, as the cluster's admin, the three namespaces: the admin's own
// with glance registered and its endpoint; tenant-a by docs/security.md's recipe (its
// KeystoneAPI acts as an admin user of its own, whose password's Secret alice may write
// but not read, and allows roles service and tenant-a-*, no role creation, services and
// users named tenant-a-*); tenant-b with keystone-operator's defaults and the admin's
// own login. Each tenant has the namespace rights of tenantRules.
func (w *world) makeNamespaces(ctx context.Context) error {
	if err := w.keepFinalizers(ctx); err != nil {
		return err
	}
	no := false
	for _, ns := range []struct {
		name, user, adminUser, password string
		policy                          *keystonev1.RegistrationPolicy
	}{
		{victim, "", "admin", adminPassword, nil},
		{tenantA, "alice", operatorA, "tenant-a-operator-pw", &keystonev1.RegistrationPolicy{Roles: []string{"service", "tenant-a-*"},
			CreateRoles: &no, Services: []string{"*/tenant-a-*"}, Users: []string{"tenant-a-*"}}},
		{tenantB, "bob", "admin", adminPassword, nil},
	} {
		if err := w.makeNamespace(ctx, ns.name, ns.adminUser, ns.password, ns.policy, ns.user != ""); err != nil {
			return err
		}
		if ns.user != "" {
			if err := w.grantTenant(ctx, ns.name, ns.user); err != nil {
				return err
			}
		}
	}
	// glance, as glance-operator registers it, by the admin's namespace.
	if err := w.cluster.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: victim, Name: "osp-secret"},
		StringData: map[string]string{"GlancePassword": "glance-pw"}}); err != nil {
		return err
	}
	return w.deployGlance(ctx)
}

// makeNamespace makes namespace name with its external KeystoneAPI keystone at the real
// Keystone, acting as adminUser with password, under policy; labelled as the recipe's
// step 6 says when it is handed to a tenant.
func (w *world) makeNamespace(ctx context.Context, name, adminUser, password string, policy *keystonev1.RegistrationPolicy,
	tenant bool) error {
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if tenant {
		namespace.Labels = map[string]string{"keystone.openstack.org/tenant": "true"}
	}
	if err := w.cluster.Create(ctx, namespace); err != nil {
		return err
	}
	if err := w.cluster.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "keystone-admin"},
		StringData: map[string]string{"AdminPassword": password}}); err != nil {
		return err
	}
	if err := w.cluster.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "keystone-ca"},
		Data: map[string][]byte{"tls-ca-bundle.pem": w.ca}}); err != nil {
		return err
	}
	api := &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "keystone"},
		Spec: keystonev1.KeystoneAPISpec{ExternalKeystoneAPI: true, ContainerImage: "unused", Secret: "keystone-admin",
			Region: "regionOne", AdminUser: adminUser, AdminProject: "admin",
			PasswordSelectors: keystonev1.PasswordSelector{Admin: "AdminPassword"}, RegistrationPolicy: policy}}
	api.Spec.TLS.CaBundleSecretName = "keystone-ca"
	api.Spec.Override.Service = &keystonev1.ServiceOverrides{
		Public:   &keystonev1.EndpointOverride{EndpointURL: ptr.To(w.url)},
		Internal: &keystonev1.EndpointOverride{EndpointURL: ptr.To(w.url)},
	}
	return w.cluster.Create(ctx, api)
}

// keepFinalizers installs the recipe's step 6 (config/samples/tenant/keep-finalizers.yaml):
// in the tenants' namespaces, only the operator removes its finalizers.
func (w *world) keepFinalizers(ctx context.Context) error {
	root, err := controlplane.RepoRoot()
	if err != nil {
		return err
	}
	objs, err := controlplane.Manifest(filepath.Join(root, "config", "samples", "tenant", "keep-finalizers.yaml"))
	if err != nil {
		return err
	}
	for _, obj := range objs {
		if err := w.cluster.Create(ctx, obj); err != nil {
			return fmt.Errorf("creating %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	return nil
}

// deployGlance creates glance's KeystoneService and KeystoneEndpoint in the admin's
// namespace, as glance-operator writes them, and waits until both are Ready.
func (w *world) deployGlance(ctx context.Context) error {
	svc := &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Namespace: victim, Name: "glance"},
		Spec: keystonev1.KeystoneServiceSpec{ServiceType: "image", ServiceName: "glance", ServiceDescription: "Glance Service",
			Enabled: ptr.To(true), ServiceUser: "glance", Secret: "osp-secret", PasswordSelector: "GlancePassword"}}
	ep := &keystonev1.KeystoneEndpoint{ObjectMeta: metav1.ObjectMeta{Namespace: victim, Name: "glance"},
		Spec: keystonev1.KeystoneEndpointSpec{ServiceName: "glance", Endpoints: map[string]string{
			"public": "https://glance.example.com", "internal": "http://glance-internal.openstack.svc:9292"}}}
	for _, obj := range []client.Object{svc, ep} {
		if err := w.cluster.Create(ctx, obj); err != nil {
			return err
		}
	}
	for _, obj := range []client.Object{svc, ep} {
		if err := waitReady(ctx, w.cluster, obj); err != nil {
			return err
		}
	}
	return nil
}

// tenantRules are a tenant's rights in her namespace: her registrations and ConfigMaps
// in full, Secrets written but never read, her KeystoneAPI and every status read only.
var tenantRules = []rbacv1.PolicyRule{
	{APIGroups: []string{keystonev1.GroupVersion.Group}, Resources: []string{"keystoneservices", "keystoneendpoints",
		"keystoneapplicationcredentials"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
	{APIGroups: []string{keystonev1.GroupVersion.Group}, Resources: []string{"keystoneapis", "keystoneapis/status",
		"keystoneservices/status", "keystoneendpoints/status", "keystoneapplicationcredentials/status"},
		Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
	{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"create", "update", "patch", "delete"}},
	{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"get", "list", "watch"}},
}

// grantTenant gives user tenantRules in namespace ns.
func (w *world) grantTenant(ctx context.Context, ns, user string) error {
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant"}, Rules: tenantRules}
	if err := w.cluster.Create(ctx, role); err != nil {
		return err
	}
	return w.cluster.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}})
}
