package tree

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/tests/support/controlplane"
	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// The conditions were last changed at changed; the tree is drawn at now.
var (
	changed = time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	now     = changed.Add(5 * time.Minute)
)

// c is a client of an API server with the CRDs and no operator: the statuses are the
// ones the tests write. Without the API server's binaries, unavailable says why
// (needAPIServer ends each test on it).
var (
	c           client.Client
	unavailable error
)

// needAPIServer ends t when TestMain could not start the API server for lack of its
// binaries: skipped under a plain go test, failed under make.
func needAPIServer(t *testing.T) {
	t.Helper()
	controlplane.Unavailable(t, unavailable)
}

func TestMain(m *testing.M) {
	root, err := controlplane.RepoRoot()
	if err != nil {
		panic(err)
	}
	env, err := controlplane.Environment(root)
	var missing *controlplane.MissingError
	if errors.As(err, &missing) {
		unavailable = err
		os.Exit(m.Run())
	}
	if err != nil {
		panic(err)
	}
	cfg, err := env.Start()
	if err != nil {
		panic(err)
	}
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(keystonev1.AddToScheme(scheme))
	if c, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		panic(err)
	}
	code := m.Run()
	_ = env.Stop()
	os.Exit(code)
}

// cond is a condition that last changed at changed.
func cond(t lc.Type, status corev1.ConditionStatus, reason lc.Reason, severity lc.Severity, msg string) lc.Condition {
	return lc.Condition{Type: t, Status: status, Reason: reason, Severity: severity, Message: msg,
		LastTransitionTime: metav1.NewTime(changed)}
}

func ok(t lc.Type, msg string) lc.Condition { return cond(t, corev1.ConditionTrue, "Ready", "", msg) }

// create makes obj in namespace ns and writes its status (conditions and the rest).
func create(g Gomega, ns string, obj client.Object, setStatus func()) {
	obj.SetNamespace(ns)
	g.Expect(c.Create(context.Background(), obj)).To(Succeed())
	if setStatus != nil {
		setStatus()
		g.Expect(c.Status().Update(context.Background(), obj)).To(Succeed())
	}
}

func namespace(g Gomega, name string) string {
	g.Expect(c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
	return name
}

// keystoneAPI is a KeystoneAPI with what the schema requires.
func keystoneAPI() *keystonev1.KeystoneAPI {
	return &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Name: "keystone"},
		Spec: keystonev1.KeystoneAPISpec{ContainerImage: "keystone:current", Secret: "osp-secret", DatabaseInstance: "openstack"}}
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test ./internal/tree -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func render(g Gomega, ns string, target *Target, opts Options) []byte {
	nodes, err := Build(context.Background(), c, ns, target, opts)
	g.Expect(err).NotTo(HaveOccurred())
	var b bytes.Buffer
	g.Expect(Render(&b, nodes, now)).To(Succeed())
	return b.Bytes()
}

func TestRolloutBlockedAtDBSync(t *testing.T) {
	needAPIServer(t)
	g := NewWithT(t)
	ns := namespace(g, "blocked-at-db-sync")
	api := keystoneAPI()
	create(g, ns, api, func() {
		running := "job keystone-db-sync running (0 failed attempts so far)"
		api.Status.Conditions = lc.Conditions{
			cond("Ready", "False", "Created", lc.SeverityInfo, "DBSyncReady (8/14 ready): "+running),
			ok("InputReady", "admin password found in secret osp-secret"),
			ok("ServiceAccountReady", "pods run as ServiceAccount keystone-keystone"),
			ok("DBReady", "database keystone ready at openstack.blocked-at-db-sync.svc"),
			ok("MemcachedReady", "Memcached memcached ready with 1 servers"),
			ok("RabbitMqTransportURLReady", "notifications go to RabbitMQ cluster rabbitmq through TransportURL keystone-keystone-transport"),
			ok("ServiceConfigReady", "configuration rendered into secret keystone-config-data"),
			ok("FernetKeysReady", "5 fernet keys in secret keystone, next rotation at 2026-11-26T10:00:00Z"),
			cond("DBSyncReady", "False", "Created", lc.SeverityInfo, running),
			cond("ExposeServiceReady", "Unknown", "Init", "", "waiting for DBSyncReady"),
			cond("BootstrapReady", "Unknown", "Init", "", "waiting for DBSyncReady"),
			cond("DeploymentReady", "Unknown", "Init", "", "waiting for DBSyncReady"),
			cond("CronJobReady", "Unknown", "Init", "", "waiting for DBSyncReady"),
			cond("OpenStackConfigReady", "Unknown", "Init", "", "waiting for DBSyncReady"),
			ok("RegistrationsReady", "no KeystoneService, KeystoneEndpoint or KeystoneApplicationCredential in the namespace"),
			cond("Reconciling", "True", "Created", "", "DBSyncReady (8/14 ready): "+running),
		}
	})
	golden(t, "blocked-at-db-sync.txt", render(g, ns, nil, Options{Show: ShowBlocking}))
	golden(t, "blocked-at-db-sync-all.txt", render(g, ns, nil, Options{Show: ShowAll}))
}

func TestOneFailingRegistration(t *testing.T) {
	needAPIServer(t)
	g := NewWithT(t)
	ns := namespace(g, "one-failing")
	api := keystoneAPI()
	create(g, ns, api, func() {
		api.Status.Conditions = lc.Conditions{
			ok("Ready", "all 14 steps ready"),
			ok("InputReady", "admin password found in secret osp-secret"),
			cond("RegistrationsReady", "False", "UserFailed", lc.SeverityError,
				"KeystoneService nova: ServiceUserReady (3/6 ready): Keystone refused to create user nova: 403 (2 of 4 registrations not ready)"),
		}
	})
	for _, svc := range []struct{ name, kind string }{{"glance", "image"}, {"nova", "compute"}} {
		s := &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Name: svc.name},
			Spec: keystonev1.KeystoneServiceSpec{ServiceName: svc.name, ServiceType: svc.kind, ServiceUser: svc.name,
				Secret: "osp-secret", PasswordSelector: "ServicePassword"}}
		create(g, ns, s, func() {
			if svc.name == "glance" {
				s.Status.Conditions = lc.Conditions{ok("Ready", "all 6 steps ready"), ok("ServiceUserReady", "user glance")}
				return
			}
			s.Status.Conditions = lc.Conditions{
				cond("Ready", "False", "UserFailed", lc.SeverityError, "ServiceUserReady (3/6 ready): Keystone refused to create user nova: 403"),
				ok("KeystoneAPIReady", "KeystoneAPI keystone is ready"),
				ok("InputReady", "password found in secret osp-secret"),
				ok("KeystoneServiceReady", "service nova (compute) registered"),
				cond("ServiceUserReady", "False", "UserFailed", lc.SeverityError, "Keystone refused to create user nova: 403"),
				cond("RolesReady", "Unknown", "Init", "", "waiting for ServiceUserReady"),
				cond("RoleAssignmentReady", "Unknown", "Init", "", "waiting for ServiceUserReady"),
				cond("Stalled", "True", "UserFailed", "", "ServiceUserReady: Keystone refused to create user nova: 403"),
			}
		})
		ep := &keystonev1.KeystoneEndpoint{ObjectMeta: metav1.ObjectMeta{Name: svc.name},
			Spec: keystonev1.KeystoneEndpointSpec{ServiceName: svc.name, Endpoints: map[string]string{"public": "https://" + svc.name}}}
		create(g, ns, ep, func() {
			if svc.name == "glance" {
				ep.Status.Conditions = lc.Conditions{ok("Ready", "all 3 steps ready")}
				ep.Status.Endpoints = []keystonev1.Endpoint{{Interface: "public", URL: "https://glance", ID: "e1", Region: "regionTwo"}}
				return
			}
			ep.Status.Conditions = lc.Conditions{
				cond("Ready", "False", "UserFailed", lc.SeverityError, "KeystoneServiceReady (1/3 ready): KeystoneService nova: ServiceUserReady (3/6 ready): 403"),
				ok("KeystoneAPIReady", "KeystoneAPI keystone is ready"),
				cond("KeystoneServiceReady", "False", "UserFailed", lc.SeverityError, "KeystoneService nova: ServiceUserReady (3/6 ready): 403"),
				cond("KeystoneServiceOSEndpointsReady", "Unknown", "Init", "", "waiting for KeystoneServiceReady"),
			}
		})
	}
	golden(t, "one-failing-registration.txt", render(g, ns, nil, Options{Show: ShowBlocking}))
	golden(t, "one-failing-registration-nova.txt", render(g, ns, &Target{Kind: "KeystoneService", Name: "nova"}, Options{Show: ShowBlocking}))

	nodes, err := Build(context.Background(), c, ns, &Target{Kind: "KeystoneEndpoint", Name: "nova"}, Options{Show: ShowBlocking})
	g.Expect(err).NotTo(HaveOccurred())
	out, err := json.MarshalIndent(nodes, "", "  ")
	g.Expect(err).NotTo(HaveOccurred())
	golden(t, "one-failing-registration-endpoint.json", append(out, '\n'))

	_, err = Build(context.Background(), c, ns, &Target{Kind: "KeystoneService", Name: "swift"}, Options{Show: ShowBlocking})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
	g.Expect(err).To(MatchError(`keystoneservices.keystone.openstack.org "swift" not found`), "as kubectl get says it")
	_, err = Build(context.Background(), c, ns, &Target{Kind: "Deployment", Name: "keystone"}, Options{Show: ShowBlocking})
	g.Expect(err).To(MatchError(ContainSubstring("not a Keystone kind")))
}

func TestRotationHeldByAConsumer(t *testing.T) {
	needAPIServer(t)
	g := NewWithT(t)
	ns := namespace(g, "rotation-held")
	api := keystoneAPI()
	create(g, ns, api, func() {
		api.Status.Conditions = lc.Conditions{ok("Ready", "all 14 steps ready"), ok("RegistrationsReady", "all 2 registrations ready")}
	})
	svc := &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Name: "glance"},
		Spec: keystonev1.KeystoneServiceSpec{ServiceName: "glance", ServiceType: "image", ServiceUser: "glance",
			Secret: "osp-secret", PasswordSelector: "GlancePassword"}}
	create(g, ns, svc, func() { svc.Status.Conditions = lc.Conditions{ok("Ready", "all 6 steps ready")} })
	for name, finalizers := range map[string][]string{
		"ac-glance-secret-b": {"keystone.openstack.org/ac-secret-protection"},
		"ac-glance-secret-a": {"keystone.openstack.org/ac-secret-protection", "openstack.org/glance"},
	} {
		create(g, ns, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Finalizers: finalizers}}, nil)
	}
	ac := &keystonev1.KeystoneApplicationCredential{ObjectMeta: metav1.ObjectMeta{Name: "ac-glance"},
		Spec: keystonev1.KeystoneApplicationCredentialSpec{UserName: "glance", Secret: "osp-secret", PasswordSelector: "GlancePassword",
			Roles: []string{"service"}, ExpirationDays: 365, GracePeriodDays: 182}}
	create(g, ns, ac, func() {
		ac.Status.SecretName, ac.Status.PreviousSecretName = "ac-glance-secret-b", "ac-glance-secret-a"
		held := "replaced at 2026-11-24T09:00:00Z and still held: secret ac-glance-secret-a is used by openstack.org/glance; " +
			"its consumers must move to secret ac-glance-secret-b"
		ac.Status.Conditions = lc.Conditions{
			ok("Ready", "all 6 steps ready"),
			ok("ApplicationCredentialCleanupReady", "earlier credentials kept while in use: secret ac-glance-secret-a is used by openstack.org/glance"),
			cond("PreviousCredentialReleased", "False", "CredentialHeld", lc.SeverityWarning, held),
		}
	})
	golden(t, "rotation-held.txt", render(g, ns, nil, Options{Show: ShowBlocking}))
}
