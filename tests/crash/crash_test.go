// Package crash kills the operator with SIGKILL at random points while it rolls out
// KeystoneAPIs and registers services in Debian's real Keystone (over HTTPS, an
// external KeystoneAPI verifying it against a CA bundle), and while it deletes them, then checks that everything converged: every object Ready (or gone), no
// duplicate in Keystone, no finalizer left behind.
package crash

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/endpoints"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/roles"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/services"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/users"
	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/cmd/manager"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/tests/support/controlplane"
	"github.com/keystone-stepwise/keystone-operator/tests/support/localkeystone"
	"github.com/keystone-stepwise/keystone-operator/tests/support/testactor"
	"github.com/keystone-stepwise/keystone-operator/tests/support/testutil"
	. "github.com/onsi/gomega"
	memcachedv1 "github.com/openstack-k8s-operators/infra-operator/apis/memcached/v1beta1"
	mariadbv1 "github.com/openstack-k8s-operators/mariadb-operator/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

const (
	rollouts      = 20
	registrations = 50
	adminPassword = "crash-admin-secret"
	// kills is how many times the operator is killed in each phase.
	kills = 12
)

// operator runs the manager binary and kills it with SIGKILL.
type operator struct {
	t          *testing.T
	binary     string
	kubeconfig string
	logPath    string
	cmd        *exec.Cmd
	killed     int
}

func (o *operator) start() {
	o.t.Helper()
	logFile, err := os.OpenFile(o.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		o.t.Fatal(err)
	}
	defer func() { _ = logFile.Close() }() // the child holds its own descriptor
	// A short orphan grace: TestCrashKeystoneGoneMidTeardown waits it out with Keystone stopped.
	cmd := exec.Command(o.binary, "--kubeconfig", o.kubeconfig, "--metrics-bind-address=0", "--health-probe-bind-address=0", "--orphan-grace=10s")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		o.t.Fatalf("starting the operator: %v", err)
	}
	o.cmd = cmd
}

// kill sends SIGKILL and waits for the process to go.
func (o *operator) kill() {
	if o.cmd == nil {
		return
	}
	_ = o.cmd.Process.Signal(syscall.SIGKILL)
	_ = o.cmd.Wait()
	o.cmd = nil
	o.killed++
}

// rampage kills the operator n times, each after a random 0.3 to 2.5 s of work,
// restarting it at once, and leaves it running.
func (o *operator) rampage(n int) {
	for range n {
		o.start()
		time.Sleep(300*time.Millisecond + rand.N(2200*time.Millisecond)) //nolint:gosec // a random moment, not a secret
		o.kill()
	}
	o.start()
}

// logTail is the end of the operator's log, for a failure message.
func (o *operator) logTail() string {
	data, _ := os.ReadFile(o.logPath)
	if len(data) > 4000 {
		data = data[len(data)-4000:]
	}
	return string(data)
}

// harness is the test's world: the control plane, the real Keystone, the actor and the
// operator process.
type harness struct {
	stack *localkeystone.Stack
	// caPEM verifies Keystone's certificate.
	caPEM []byte
	t     *testing.T
	g     *WithT
	ctx   context.Context
	c     client.Client
	kc    *gophercloud.ServiceClient
	url   string
	op    *operator
	clean []func()
}

const registrationNamespace = "registrations"

func newHarness(t *testing.T, ctx context.Context) *harness {
	controlplane.Unavailable(t, localkeystone.NotInstalled())
	h := &harness{t: t, g: NewWithT(t), ctx: ctx}
	g := h.g
	log.SetLogger(zap.New(zap.WriteTo(io.Discard))) // the actor's; the operator logs to its own file
	dir := t.TempDir()
	root, err := controlplane.RepoRoot()
	g.Expect(err).NotTo(HaveOccurred())
	binary := filepath.Join(dir, "manager")
	build := exec.CommandContext(ctx, "go", "build", "-o", binary, "./cmd")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the manager: %v\n%s", err, out)
	}
	env, err := controlplane.Environment(root)
	controlplane.Unavailable(t, err)
	g.Expect(err).NotTo(HaveOccurred())
	cfg, err := env.Start()
	g.Expect(err).NotTo(HaveOccurred())
	h.clean = append(h.clean, func() { _ = env.Stop() })
	admin := filepath.Join(dir, "admin-kubeconfig")
	g.Expect(controlplane.WriteKubeconfig(env, admin)).To(Succeed())
	// The operator runs with the permissions config/rbac grants, as in a cluster.
	kubeconfig := filepath.Join(dir, "kubeconfig")
	g.Expect(controlplane.WriteOperatorKubeconfig(ctx, admin, kubeconfig, root)).To(Succeed())
	h.c, err = client.New(cfg, client.Options{Scheme: manager.Scheme})
	g.Expect(err).NotTo(HaveOccurred())

	// The registrations reach Keystone over HTTPS, verified against a CA bundle, as
	// openstack-operator's default (TLS everywhere) makes them.
	ca, err := testutil.NewCA("crash-keystone-ca")
	g.Expect(err).NotTo(HaveOccurred())
	cert, key, err := ca.Issue("127.0.0.1")
	g.Expect(err).NotTo(HaveOccurred())
	h.caPEM = ca.PEM
	stack, err := localkeystone.StartStack(ctx, filepath.Join(dir, "keystone"), stackAPI(), adminPassword,
		localkeystone.WithTLS(localkeystone.TLS{Cert: cert, Key: key, CA: ca.PEM}))
	g.Expect(err).NotTo(HaveOccurred())
	h.stack = stack
	h.clean = append(h.clean, stack.Stop)
	h.url = stack.Keystone.URL()
	h.kc = adminClient(g, h.url, ca.PEM)

	// Each test of the package starts its own actors: their controllers' names repeat.
	actors, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: manager.Scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(testactor.Setup(actors)).To(Succeed())
	actorCtx, stopActors := context.WithCancel(ctx) //nolint:gosec // stopActors runs in close, with the rest
	h.clean = append(h.clean, stopActors)
	go func() { _ = actors.Start(actorCtx) }()

	h.op = &operator{t: t, binary: binary, kubeconfig: kubeconfig, logPath: filepath.Join(dir, "operator.log")}
	h.clean = append(h.clean, h.op.kill)
	return h
}

// close stops everything, the last started first; on a failure it shows the operator's log.
func (h *harness) close() {
	if h.t.Failed() && h.op != nil {
		h.t.Logf("the operator's log ends with:\n%s", h.op.logTail())
	}
	for i := len(h.clean) - 1; i >= 0; i-- {
		h.clean[i]()
	}
}

func TestCrashSafety(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	h := newHarness(t, ctx)
	defer h.close()

	deployed := h.createRollouts()
	h.createRegistrations()
	start := time.Now()
	h.op.rampage(kills)
	h.g.Eventually(h.allReady, 4*time.Minute, time.Second).Should(Succeed())
	t.Logf("killed %d times at random points; %d KeystoneAPIs and %d registrations Ready %s after the first start",
		h.op.killed, rollouts+1, registrations, time.Since(start).Round(time.Second))
	h.expectNoDuplicate(deployed)

	h.deleteAll(deployed)
	start = time.Now()
	killedBefore := h.op.killed
	h.op.kill()
	h.op.rampage(kills / 2)
	h.g.Eventually(h.allGone, 3*time.Minute, time.Second).Should(Succeed())
	t.Logf("killed %d more times while deleting; everything gone %s after the deletion", h.op.killed-killedBefore,
		time.Since(start).Round(time.Second))
	h.expectNothingLeft()
}

// TestCrashKeystoneGoneMidTeardown deletes the registrations and their external
// KeystoneAPI, stops Keystone before they are all removed (a decommissioned Keystone),
// and kills the operator at random meanwhile: once the KeystoneAPI is annotated
// orphan-on-delete, everything goes, no finalizer is left, and every registration that
// was still in Keystone is named in an Orphaned Event.
func TestCrashKeystoneGoneMidTeardown(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	h := newHarness(t, ctx)
	defer h.close()
	g, c, reg := h.g, h.c, registrationNamespace

	h.createRegistrations()
	h.op.rampage(kills / 4)
	g.Eventually(h.allReady, 3*time.Minute, time.Second).Should(Succeed())

	h.deleteAll(nil)
	time.Sleep(rand.N(1500 * time.Millisecond)) //nolint:gosec // a random moment, not a secret
	h.stack.Keystone.Stop()
	t.Log("Keystone stopped while the registrations were being removed")
	h.op.kill()
	h.op.rampage(kills / 4)
	// Stuck: the conditions say how to finish.
	g.Eventually(func(g Gomega) {
		list := &keystonev1.KeystoneServiceList{}
		g.Expect(c.List(ctx, list, client.InNamespace(reg))).To(Succeed())
		g.Expect(list.Items).NotTo(BeEmpty(), "every registration left Keystone before it stopped: no escape to test")
	}, 30*time.Second, time.Second).Should(Succeed())
	api := &keystonev1.KeystoneAPI{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: reg, Name: "keystone"}, api)).To(Succeed())
	api.Annotations = map[string]string{"keystone.openstack.org/orphan-on-delete": "true"}
	g.Expect(c.Update(ctx, api)).To(Succeed())
	h.op.kill()
	h.op.rampage(kills / 4)
	g.Eventually(h.allGone, 3*time.Minute, time.Second).Should(Succeed())
	h.expectNoFinalizers()
	events := &corev1.EventList{}
	g.Expect(c.List(ctx, events, client.InNamespace(reg))).To(Succeed())
	orphaned := map[string]bool{}
	for _, e := range events.Items {
		if e.Reason == "Orphaned" {
			orphaned[e.InvolvedObject.Kind+"/"+e.InvolvedObject.Name] = true
		}
	}
	g.Expect(orphaned).NotTo(BeEmpty(), "what stayed in Keystone is named in Events")
	t.Logf("killed %d times; %d registrations named as left in the stopped Keystone", h.op.killed, len(orphaned))
}

// createRollouts creates one KeystoneAPI per namespace, its dependencies played by the actor.
func (h *harness) createRollouts() []string {
	var deployed []string
	for i := range rollouts {
		ns := fmt.Sprintf("rollout-%02d", i)
		deployed = append(deployed, ns)
		h.g.Expect(h.c.Create(h.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns,
			Labels: map[string]string{testactor.Label: "on"}}})).To(Succeed())
		inputs(h.ctx, h.g, h.c, ns)
		h.g.Expect(h.c.Create(h.ctx, &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "keystone"},
			Spec: keystonev1.KeystoneAPISpec{ContainerImage: "keystone", Secret: "osp-secret", DatabaseInstance: "openstack"}})).To(Succeed())
	}
	return deployed
}

// createRegistrations creates an external KeystoneAPI at the real Keystone, and the
// KeystoneServices and KeystoneEndpoints to register in it.
func (h *harness) createRegistrations() {
	g, ctx, c, reg := h.g, h.ctx, h.c, registrationNamespace
	g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: reg}})).To(Succeed())
	g.Expect(c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: reg, Name: "osp-secret"},
		StringData: map[string]string{"AdminPassword": adminPassword, "ServicePassword": "service-password"}})).To(Succeed())
	g.Expect(c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: reg, Name: "combined-ca-bundle"},
		StringData: map[string]string{"tls-ca-bundle.pem": string(h.caPEM)}})).To(Succeed())
	api := &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Namespace: reg, Name: "keystone"},
		Spec: keystonev1.KeystoneAPISpec{ContainerImage: "keystone", Secret: "osp-secret", ExternalKeystoneAPI: true,
			Override: keystonev1.APIOverrideSpec{Service: &keystonev1.ServiceOverrides{
				Public:   &keystonev1.EndpointOverride{EndpointURL: ptr.To(h.url)},
				Internal: &keystonev1.EndpointOverride{EndpointURL: ptr.To(h.url)}}}}}
	api.Spec.TLS.CaBundleSecretName = "combined-ca-bundle"
	g.Expect(c.Create(ctx, api)).To(Succeed())
	for i := range registrations {
		name := fmt.Sprintf("svc%02d", i)
		g.Expect(c.Create(ctx, &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Namespace: reg, Name: name},
			Spec: keystonev1.KeystoneServiceSpec{ServiceType: "type-" + name, ServiceName: name, ServiceUser: "user-" + name,
				Secret: "osp-secret", PasswordSelector: "ServicePassword"}})).To(Succeed())
		g.Expect(c.Create(ctx, &keystonev1.KeystoneEndpoint{ObjectMeta: metav1.ObjectMeta{Namespace: reg, Name: name},
			Spec: keystonev1.KeystoneEndpointSpec{ServiceName: name, Endpoints: map[string]string{
				"public": "https://" + name + ".example.com", "internal": "http://" + name + ".svc:8080"}}})).To(Succeed())
	}
}

// ourKinds lists every object of the kinds this suite reconciles.
func ourKinds() []client.ObjectList {
	return []client.ObjectList{&keystonev1.KeystoneAPIList{}, &keystonev1.KeystoneServiceList{}, &keystonev1.KeystoneEndpointList{}}
}

// allReady checks that every object of ours is Ready for its current generation.
func (h *harness) allReady(g Gomega) {
	for _, list := range ourKinds() {
		g.Expect(h.c.List(h.ctx, list)).To(Succeed())
		items, err := apimeta.ExtractList(list)
		g.Expect(err).NotTo(HaveOccurred())
		for _, item := range items {
			obj := item.(client.Object)
			g.Expect(readyNow(obj)).To(BeTrue(), "%T %s/%s", obj, obj.GetNamespace(), obj.GetName())
		}
	}
}

// allGone checks that no object of ours is left.
func (h *harness) allGone(g Gomega) {
	for _, list := range ourKinds() {
		g.Expect(h.c.List(h.ctx, list)).To(Succeed())
		g.Expect(apimeta.LenList(list)).To(BeZero(), "%T left", list)
	}
}

// expectNoDuplicate checks that each rollout has one database and account, and that
// Keystone holds exactly one service, user, two endpoints and the two roles per
// registration, and one service project.
func (h *harness) expectNoDuplicate(deployed []string) {
	g := h.g
	for _, ns := range deployed {
		for _, list := range []client.ObjectList{&mariadbv1.MariaDBDatabaseList{}, &mariadbv1.MariaDBAccountList{}} {
			g.Expect(h.c.List(h.ctx, list, client.InNamespace(ns))).To(Succeed())
			g.Expect(apimeta.LenList(list)).To(Equal(1), "%T in %s", list, ns)
		}
	}
	catalog := readKeystone(g, h.kc)
	for i := range registrations {
		name := fmt.Sprintf("svc%02d", i)
		g.Expect(catalog.services["type-"+name]).To(HaveLen(1), "services of type-%s", name)
		g.Expect(catalog.users["user-"+name]).To(HaveLen(1), "users named user-%s", name)
		g.Expect(catalog.endpoints[catalog.services["type-"+name][0]]).To(HaveLen(2), "endpoints of %s", name)
		g.Expect(catalog.roles[catalog.users["user-"+name][0]]).To(ConsistOf("admin", "service"), "roles of user-%s", name)
	}
	g.Expect(catalog.projects["service"]).To(HaveLen(1))
}

// deleteAll deletes every registration and every KeystoneAPI.
func (h *harness) deleteAll(deployed []string) {
	g, ctx, c, reg := h.g, h.ctx, h.c, registrationNamespace
	for i := range registrations {
		name := fmt.Sprintf("svc%02d", i)
		g.Expect(c.Delete(ctx, &keystonev1.KeystoneEndpoint{ObjectMeta: metav1.ObjectMeta{Namespace: reg, Name: name}})).To(Succeed())
		g.Expect(c.Delete(ctx, &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Namespace: reg, Name: name}})).To(Succeed())
	}
	for _, ns := range append(deployed, reg) {
		g.Expect(c.Delete(ctx, &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "keystone"}})).To(Succeed())
	}
}

// expectNothingLeft checks that no object keeps a finalizer of ours and that Keystone
// holds nothing of the registrations.
func (h *harness) expectNothingLeft() {
	h.expectNoFinalizers()
	h.expectKeystoneEmpty()
}

// expectNoFinalizers checks that no object keeps a finalizer of ours.
func (h *harness) expectNoFinalizers() {
	g := h.g
	for _, list := range []client.ObjectList{&memcachedv1.MemcachedList{}, &mariadbv1.MariaDBDatabaseList{},
		&mariadbv1.MariaDBAccountList{}, &corev1.SecretList{}} {
		g.Expect(h.c.List(h.ctx, list)).To(Succeed())
		items, err := apimeta.ExtractList(list)
		g.Expect(err).NotTo(HaveOccurred())
		for _, item := range items {
			obj := item.(client.Object)
			for _, f := range obj.GetFinalizers() {
				g.Expect(f).NotTo(HavePrefix("keystone.openstack.org/"), "%T %s/%s keeps a finalizer", obj, obj.GetNamespace(), obj.GetName())
			}
		}
	}
}

// expectKeystoneEmpty checks that Keystone holds nothing of the registrations.
func (h *harness) expectKeystoneEmpty() {
	g := h.g
	catalog := readKeystone(g, h.kc)
	for typ := range catalog.services {
		g.Expect(typ).NotTo(HavePrefix("type-svc"), "a service left in Keystone")
	}
	for name := range catalog.users {
		g.Expect(name).NotTo(HavePrefix("user-svc"), "a user left in Keystone")
	}
}

// inputs creates what a KeystoneAPI needs besides what the actor plays: its Secret,
// a ready Memcached and the Galera Service.
func inputs(ctx context.Context, g *WithT, c client.Client, ns string) {
	g.Expect(c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "osp-secret"},
		StringData: map[string]string{"AdminPassword": adminPassword}})).To(Succeed())
	mc := &memcachedv1.Memcached{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "memcached"},
		Spec: memcachedv1.MemcachedSpec{MemcachedSpecCore: memcachedv1.MemcachedSpecCore{Replicas: ptr.To[int32](1)}}}
	g.Expect(c.Create(ctx, mc)).To(Succeed())
	mc.Status.Conditions = testutil.ReadyConditions()
	mc.Status.ServerList = []string{"memcached-0:11211"}
	g.Expect(c.Status().Update(ctx, mc)).To(Succeed())
	g.Expect(c.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "openstack",
		Labels: map[string]string{"app": "mariadb", "cr": "mariadb-openstack"}},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 3306}}}})).To(Succeed())
}

// readyNow tells whether an object's Ready condition is True for its current generation
// (keystone-operator's KeystoneService schema has no observedGeneration: Ready alone).
func readyNow(obj client.Object) bool {
	switch o := obj.(type) {
	case *keystonev1.KeystoneAPI:
		return o.Status.Conditions.IsTrue("Ready") && o.Status.ObservedGeneration == o.Generation
	case *keystonev1.KeystoneService:
		return o.Status.Conditions.IsTrue("Ready") && o.Status.ObservedGeneration == o.Generation
	case *keystonev1.KeystoneEndpoint:
		return o.Status.Conditions.IsTrue("Ready") && o.Status.ObservedGeneration == o.Generation
	}
	return false
}

func stackAPI() *keystonev1.KeystoneAPI {
	return &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Namespace: "crash"},
		Spec: keystonev1.KeystoneAPISpec{ContainerImage: "keystone", Secret: "osp-secret", DatabaseInstance: "openstack",
			DatabaseAccount: "keystone", MemcachedInstance: "memcached", Region: "regionOne", AdminProject: "admin", AdminUser: "admin",
			PasswordSelectors: keystonev1.PasswordSelector{Admin: "AdminPassword"}, FernetMaxActiveKeys: ptr.To[int32](5)}}
}

func adminClient(g *WithT, url string, caPEM []byte) *gophercloud.ServiceClient {
	provider, err := openstack.NewClient(url + "/v3/")
	g.Expect(err).NotTo(HaveOccurred())
	transport, err := identity.TransportFor(&http.Transport{}, caPEM)
	g.Expect(err).NotTo(HaveOccurred())
	provider.HTTPClient = http.Client{Transport: transport}
	g.Expect(openstack.Authenticate(context.Background(), provider, gophercloud.AuthOptions{
		IdentityEndpoint: url + "/v3/", Username: "admin", Password: adminPassword, DomainName: "Default",
		Scope: &gophercloud.AuthScope{ProjectName: "admin", DomainName: "Default"},
	})).To(Succeed())
	return &gophercloud.ServiceClient{ProviderClient: provider, Endpoint: url + "/v3/", Type: "identity"}
}

// keystoneState is what Keystone holds, by name: service IDs by type, user IDs by
// name, endpoint IDs by service ID, role names by user ID, project IDs by name.
type keystoneState struct {
	services, users, endpoints, roles, projects map[string][]string
}

func readKeystone(g *WithT, kc *gophercloud.ServiceClient) keystoneState {
	ctx := context.Background()
	st := keystoneState{services: map[string][]string{}, users: map[string][]string{}, endpoints: map[string][]string{},
		roles: map[string][]string{}, projects: map[string][]string{}}
	pages, err := services.List(kc, nil).AllPages(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	svcs, err := services.ExtractServices(pages)
	g.Expect(err).NotTo(HaveOccurred())
	for _, s := range svcs {
		st.services[s.Type] = append(st.services[s.Type], s.ID)
	}
	pages, err = users.List(kc, nil).AllPages(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	us, err := users.ExtractUsers(pages)
	g.Expect(err).NotTo(HaveOccurred())
	for _, u := range us {
		st.users[u.Name] = append(st.users[u.Name], u.ID)
	}
	pages, err = endpoints.List(kc, nil).AllPages(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	eps, err := endpoints.ExtractEndpoints(pages)
	g.Expect(err).NotTo(HaveOccurred())
	for _, e := range eps {
		st.endpoints[e.ServiceID] = append(st.endpoints[e.ServiceID], e.ID)
	}
	pages, err = projects.List(kc, nil).AllPages(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	ps, err := projects.ExtractProjects(pages)
	g.Expect(err).NotTo(HaveOccurred())
	for _, p := range ps {
		st.projects[p.Name] = append(st.projects[p.Name], p.ID)
	}
	yes := true
	pages, err = roles.ListAssignments(kc, roles.ListAssignmentsOpts{IncludeNames: &yes}).AllPages(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	as, err := roles.ExtractRoleAssignments(pages)
	g.Expect(err).NotTo(HaveOccurred())
	for _, a := range as {
		if a.User.ID != "" && strings.TrimSpace(a.Role.Name) != "" {
			st.roles[a.User.ID] = append(st.roles[a.User.ID], a.Role.Name)
		}
	}
	return st
}
