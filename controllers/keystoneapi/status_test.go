package keystoneapi

import (
	"errors"
	"strings"
	"testing"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/internal/finalizers"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	"github.com/keystone-stepwise/keystone-operator/tests/support/testutil"
	. "github.com/onsi/gomega"
	memcachedv1 "github.com/openstack-k8s-operators/infra-operator/apis/memcached/v1beta1"
	rabbitmqv1 "github.com/openstack-k8s-operators/infra-operator/apis/rabbitmq/v1beta1"
	topologyv1 "github.com/openstack-k8s-operators/infra-operator/apis/topology/v1beta1"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	mariadbv1 "github.com/openstack-k8s-operators/mariadb-operator/api/v1beta1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// verdictOf is what a table compares of a verdict (testutil.Verdict).
type verdictOf testutil.Verdict

func brief(v condition.Verdict) verdictOf { return verdictOf(testutil.Brief(v)) }

func TestRolloutVerdict(t *testing.T) {
	dep := func(generation, observed int64, replicas, updated, available, ready int32, conds ...appsv1.DeploymentCondition) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Generation: generation},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2)},
			Status: appsv1.DeploymentStatus{ObservedGeneration: observed, Replicas: replicas, UpdatedReplicas: updated,
				AvailableReplicas: available, ReadyReplicas: ready, Conditions: conds}}
	}
	deadline := appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse,
		Reason: "ProgressDeadlineExceeded", Message: `ReplicaSet "keystone-1" has timed out progressing.`}
	tests := []struct {
		name       string
		dep        *appsv1.Deployment
		waitingFor lc.Type
		want       verdictOf
	}{
		{"a new spec not seen yet", dep(3, 2, 2, 2, 2, 2), "", verdictOf{false, "Created", lc.SeverityInfo,
			"deployment keystone: rollout of the new spec starting"}},
		{"past its progress deadline", dep(3, 3, 3, 1, 2, 2, deadline), "", verdictOf{false, "CreationFailed", lc.SeverityError,
			`deployment keystone exceeded its progress deadline: ReplicaSet "keystone-1" has timed out progressing.`}},
		{"rolling", dep(3, 3, 3, 1, 2, 2), "", verdictOf{false, "Created", lc.SeverityInfo,
			"deployment keystone: 2/2 replicas ready, 1 updated"}},
		{"rolled out", dep(3, 3, 2, 2, 2, 2), "", verdictOf{true, "", "", "deployment keystone: 2/2 replicas ready"}},
		{"rolled out while an earlier step waits", dep(3, 3, 2, 2, 2, 2), "DBSyncReady", verdictOf{true, "", "",
			"deployment keystone: 2/2 replicas ready; its pods keep their configuration until DBSyncReady is True"}},
		{"an old pod still terminating", dep(3, 3, 3, 2, 2, 2), "", verdictOf{false, "Created", lc.SeverityInfo,
			"deployment keystone: 2/2 replicas ready, 2 updated"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(brief(rolloutVerdict(tt.dep, tt.waitingFor))).To(Equal(tt.want))
		})
	}
	NewWithT(t).Expect(brief(attachmentsMissingVerdict([]string{"internalapi", "storage"}))).To(Equal(verdictOf{false,
		"DependencyNotFound", lc.SeverityWarning, "NetworkAttachmentDefinition internalapi, storage not found (networkAttachments)"}))
}

func TestJobVerdict(t *testing.T) {
	job := func(failed int32, conds ...batchv1.JobCondition) *batchv1.Job {
		return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "keystone-db-sync"},
			Status: batchv1.JobStatus{Failed: failed, Conditions: conds}}
	}
	complete := batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}
	failed := batchv1.JobCondition{Type: batchv1.JobFailed, Status: corev1.ConditionTrue,
		Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit"}
	notYetFailed := batchv1.JobCondition{Type: batchv1.JobFailed, Status: corev1.ConditionFalse}
	tests := []struct {
		name       string
		job        *batchv1.Job
		podFailure string
		want       verdictOf
	}{
		{"running", job(0), "", verdictOf{false, "Created", lc.SeverityInfo, "job keystone-db-sync running (0 failed attempts so far)"}},
		{"retrying", job(2, notYetFailed), "", verdictOf{false, "Created", lc.SeverityInfo,
			"job keystone-db-sync running (2 failed attempts so far)"}},
		{"succeeded after retries", job(1, complete), "", verdictOf{true, "", "", "job keystone-db-sync succeeded"}},
		{"failed, its pod telling why", job(4, failed), "last pod keystone-db-sync-x: Error, exit code 1: OperationalError",
			verdictOf{false, "CreationFailed", lc.SeverityError, "job keystone-db-sync failed after 4 attempts " +
				"(BackoffLimitExceeded: Job has reached the specified backoff limit); last pod keystone-db-sync-x: Error, exit code 1: OperationalError"}},
		{"failed, no pod left", job(4, failed), "", verdictOf{false, "CreationFailed", lc.SeverityError,
			"job keystone-db-sync failed after 4 attempts (BackoffLimitExceeded: Job has reached the specified backoff limit)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(brief(jobVerdict(tt.job, tt.podFailure))).To(Equal(tt.want))
		})
	}
}

func ready(status corev1.ConditionStatus, reason lc.Reason, severity lc.Severity, msg string) lc.Conditions {
	return lc.Conditions{{Type: lc.ReadyCondition, Status: status, Reason: reason, Severity: severity, Message: msg}}
}

var (
	isReady      = ready(corev1.ConditionTrue, "Ready", "", "ok")
	notReadyInfo = ready(corev1.ConditionFalse, "Requested", lc.SeverityInfo, "deploying")
	failing      = ready(corev1.ConditionFalse, "ErrorReason", lc.SeverityError, "broken")
)

func TestMemcachedVerdict(t *testing.T) {
	mc := func(conds lc.Conditions, servers ...string) *memcachedv1.Memcached {
		return &memcachedv1.Memcached{ObjectMeta: metav1.ObjectMeta{Name: "memcached"},
			Status: memcachedv1.MemcachedStatus{Conditions: conds, ServerList: servers}}
	}
	tests := []struct {
		name string
		mc   *memcachedv1.Memcached
		want verdictOf
	}{
		{"missing", nil, verdictOf{false, "DependencyNotFound", lc.SeverityWarning, "Memcached memcached not found"}},
		{"no status yet", mc(nil), verdictOf{false, "Requested", lc.SeverityInfo, "Memcached memcached: waiting for its status"}},
		{"coming up", mc(notReadyInfo), verdictOf{false, "Requested", lc.SeverityInfo, "Memcached memcached: deploying"}},
		{"failing, as it says", mc(failing), verdictOf{false, "ErrorReason", lc.SeverityError, "Memcached memcached: broken"}},
		{"ready without servers", mc(isReady), verdictOf{false, "Requested", lc.SeverityInfo,
			"Memcached memcached is ready but lists no servers yet"}},
		{"ready", mc(isReady, "a:11211", "b:11211"), verdictOf{true, "", "", "Memcached memcached ready with 2 servers"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(brief(memcachedVerdict("memcached", tt.mc))).To(Equal(tt.want))
		})
	}
}

func TestTransportURLVerdict(t *testing.T) {
	tu := func(conds lc.Conditions, secret string) *rabbitmqv1.TransportURL {
		return &rabbitmqv1.TransportURL{ObjectMeta: metav1.ObjectMeta{Name: "keystone-keystone-transport"},
			Status: rabbitmqv1.TransportURLStatus{Conditions: conds, SecretName: secret}}
	}
	tests := []struct {
		name    string
		tu      *rabbitmqv1.TransportURL
		problem string
		want    verdictOf
	}{
		{"requested", tu(nil, ""), "", verdictOf{false, "Requested", lc.SeverityInfo,
			"TransportURL keystone-keystone-transport: waiting for its status"}},
		{"failing", tu(failing, ""), "", verdictOf{false, "ErrorReason", lc.SeverityError, "TransportURL keystone-keystone-transport: broken"}},
		{"ready, no secret named yet", tu(isReady, ""), "", verdictOf{false, "Requested", lc.SeverityInfo,
			"TransportURL keystone-keystone-transport: waiting for its secret"}},
		{"its secret without the URL", tu(isReady, "rabbitmq-transport-url"), "secret rabbitmq-transport-url has no key transport_url",
			verdictOf{false, "DependencyNotFound", lc.SeverityWarning,
				"TransportURL keystone-keystone-transport: secret rabbitmq-transport-url has no key transport_url"}},
		{"ready", tu(isReady, "rabbitmq-transport-url"), "", verdictOf{true, "", "",
			"notifications go to RabbitMQ cluster rabbitmq through TransportURL keystone-keystone-transport"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(brief(transportURLVerdict(tt.tu, "rabbitmq", tt.problem))).To(Equal(tt.want))
		})
	}
}

func TestDatabaseVerdict(t *testing.T) {
	db := func(conds lc.Conditions) *mariadbv1.MariaDBDatabase {
		return &mariadbv1.MariaDBDatabase{ObjectMeta: metav1.ObjectMeta{Name: "keystone"}, Status: mariadbv1.MariaDBDatabaseStatus{Conditions: conds}}
	}
	account := func(conds lc.Conditions) *mariadbv1.MariaDBAccount {
		return &mariadbv1.MariaDBAccount{ObjectMeta: metav1.ObjectMeta{Name: "keystone"},
			Spec: mariadbv1.MariaDBAccountSpec{Secret: "keystone-db-secret"}, Status: mariadbv1.MariaDBAccountStatus{Conditions: conds}}
	}
	tests := []struct {
		name     string
		db       *mariadbv1.MariaDBDatabase
		account  *mariadbv1.MariaDBAccount
		password bool
		host     string
		want     verdictOf
	}{
		{"database coming up, before the account", db(notReadyInfo), account(failing), true, "h", verdictOf{false, "Requested",
			lc.SeverityInfo, "MariaDBDatabase keystone: deploying"}},
		{"account failing", db(isReady), account(failing), true, "h", verdictOf{false, "ErrorReason", lc.SeverityError,
			"MariaDBAccount keystone: broken"}},
		{"password missing", db(isReady), account(isReady), false, "h", verdictOf{false, "DependencyNotFound", lc.SeverityWarning,
			"secret keystone-db-secret of MariaDBAccount keystone with key DatabasePassword not found"}},
		{"no Service yet", db(isReady), account(isReady), true, "", verdictOf{false, "Requested", lc.SeverityInfo,
			"waiting for the Service of database instance openstack"}},
		{"ready", db(isReady), account(isReady), true, "openstack.ns.svc", verdictOf{true, "", "",
			"database keystone ready at openstack.ns.svc"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(brief(databaseVerdict(tt.db, tt.account, tt.password, "openstack", tt.host))).To(Equal(tt.want))
		})
	}
}

func TestNetworksVerdict(t *testing.T) {
	pod := func(name, status string) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if status != "" {
			p.Annotations = map[string]string{"k8s.v1.cni.cncf.io/network-status": status}
		}
		return p
	}
	on := func(ip string) string {
		return `[{"name":"ovn-kubernetes","ips":["10.0.0.5"]},{"name":"openstack/internalapi","ips":["` + ip + `"]}]`
	}
	tests := []struct {
		name     string
		pods     []corev1.Pod
		want     verdictOf
		attached map[string][]string
	}{
		{"a pod not attached yet", []corev1.Pod{pod("keystone-a", on("172.17.0.31")), pod("keystone-b", "")},
			verdictOf{false, "Requested", lc.SeverityInfo, "pods without an address on internalapi (1 of 2 pods)"},
			map[string][]string{"openstack/internalapi": {"172.17.0.31"}}},
		{"an unreadable annotation", []corev1.Pod{pod("keystone-a", "{")}, verdictOf{false, "ServiceUnavailable", lc.SeverityWarning,
			"pod keystone-a: failed to decode networks status {: unexpected end of JSON input"}, nil},
		{"every pod attached", []corev1.Pod{pod("keystone-b", on("172.17.0.32")), pod("keystone-a", on("172.17.0.31"))},
			verdictOf{true, "", "", "2 pods attached to internalapi"},
			map[string][]string{"openstack/internalapi": {"172.17.0.31", "172.17.0.32"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			v, attached := networksVerdict("openstack", []string{"internalapi"}, tt.pods)
			g.Expect(brief(v)).To(Equal(tt.want))
			g.Expect(attached).To(Equal(tt.attached))
		})
	}
}

func TestRegistrationsVerdict(t *testing.T) {
	reg := func(kind, name string, status corev1.ConditionStatus, reason lc.Reason, severity lc.Severity, msg string) registration {
		return registration{kind: kind, name: name, ready: &lc.Condition{Type: lc.ReadyCondition, Status: status, Reason: reason,
			Severity: severity, Message: msg}}
	}
	readySvc := reg("KeystoneService", "glance", corev1.ConditionTrue, "Ready", "", "all 5 steps ready")
	readyEp := reg("KeystoneEndpoint", "glance", corev1.ConditionTrue, "Ready", "", "all 3 steps ready")
	fresh := registration{kind: "KeystoneApplicationCredential", name: "ac-nova"}
	progressing := reg("KeystoneEndpoint", "placement", corev1.ConditionFalse, "Requested", lc.SeverityInfo, "KeystoneServiceReady (2/3 ready): ...")
	warning := reg("KeystoneApplicationCredential", "ac-glance", corev1.ConditionFalse, "UserAuthenticationFailed", lc.SeverityWarning,
		"KeystoneApplicationCredentialReady (2/6 ready): Keystone refused user glance's password")
	failing := reg("KeystoneService", "nova", corev1.ConditionFalse, "UserFailed", lc.SeverityError, "ServiceUserReady (1/5 ready): 403")
	failingToo := reg("KeystoneEndpoint", "nova", corev1.ConditionFalse, "EndpointFailed", lc.SeverityError, "KeystoneServiceOSEndpointsReady: 400")
	count := func(ready, total int32) keystonev1.RegistrationCount {
		return keystonev1.RegistrationCount{Ready: ready, Total: total}
	}
	tests := []struct {
		name   string
		regs   []registration
		counts keystonev1.KeystoneAPIRegistrations
		want   verdictOf
	}{
		{"none", nil, keystonev1.KeystoneAPIRegistrations{}, verdictOf{true, "Ready", "",
			"no KeystoneService, KeystoneEndpoint or KeystoneApplicationCredential in the namespace"}},
		{"all ready", []registration{readySvc, readyEp}, keystonev1.KeystoneAPIRegistrations{KeystoneServices: count(1, 1),
			KeystoneEndpoints: count(1, 1)}, verdictOf{true, "Ready", "",
			"all 2 registrations ready (KeystoneServices: 1, KeystoneEndpoints: 1, KeystoneApplicationCredentials: 0)"}},
		{"progressing only: Info, counted, no message of theirs", []registration{readySvc, progressing, fresh},
			keystonev1.KeystoneAPIRegistrations{KeystoneServices: count(1, 1), KeystoneEndpoints: count(0, 1),
				KeystoneApplicationCredentials: count(0, 1)},
			verdictOf{false, "Requested", lc.SeverityInfo, "2 of 3 registrations not ready yet, among them KeystoneEndpoint placement"}},
		{"a Warning before progress", []registration{progressing, warning, readySvc}, keystonev1.KeystoneAPIRegistrations{
			KeystoneServices: count(1, 1), KeystoneEndpoints: count(0, 1), KeystoneApplicationCredentials: count(0, 1)},
			verdictOf{false, "UserAuthenticationFailed", lc.SeverityWarning, "KeystoneApplicationCredential ac-glance: " +
				"KeystoneApplicationCredentialReady (2/6 ready): Keystone refused user glance's password (2 of 3 registrations not ready)"}},
		{"an Error before a Warning; a KeystoneService before its endpoint", []registration{warning, failingToo, failing},
			keystonev1.KeystoneAPIRegistrations{KeystoneServices: count(0, 1), KeystoneEndpoints: count(0, 1),
				KeystoneApplicationCredentials: count(0, 1)},
			verdictOf{false, "UserFailed", lc.SeverityError, "KeystoneService nova: ServiceUserReady (1/5 ready): 403 (3 of 3 registrations not ready)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			counts, v := registrationsVerdict(tt.regs)
			g.Expect(counts).To(Equal(tt.counts))
			got := brief(v)
			if got.True {
				got.Reason = "Ready" // Report gives a True verdict the reason Ready
			}
			g.Expect(got).To(Equal(tt.want))
		})
	}
}

func TestInputVerdicts(t *testing.T) {
	api := func(mutate ...func(*keystonev1.KeystoneAPI)) *keystonev1.KeystoneAPI {
		a := &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Namespace: "openstack", UID: "u1"},
			Spec: keystonev1.KeystoneAPISpec{ContainerImage: "keystone", Secret: "osp-secret", DatabaseInstance: "openstack"}}
		a.Spec.PasswordSelectors.Admin = "AdminPassword"
		for _, m := range mutate {
			m(a)
		}
		return a
	}
	other := api(func(a *keystonev1.KeystoneAPI) { a.Name, a.UID = "keystone-old", "u0" })
	tests := []struct {
		name    string
		api     *keystonev1.KeystoneAPI
		first   *keystonev1.KeystoneAPI
		refused bool
		want    verdictOf
	}{
		{"the namespace's first: on to the password", api(), api(), false, verdictOf{}},
		{"a second KeystoneAPI of the namespace", api(), other, true, verdictOf{false, "InvalidInput", lc.SeverityError,
			"KeystoneAPI keystone-old already deploys Keystone in namespace openstack; one KeystoneAPI per namespace: delete this one"}},
		{"a name too long for the trust flush CronJob", api(func(a *keystonev1.KeystoneAPI) { a.Name = strings.Repeat("k", deploy.MaxNameLength+1) }),
			nil, true, verdictOf{false, "InvalidInput", lc.SeverityError, ""}},
		{"openstack-operator's endpoint without a host yet", api(func(a *keystonev1.KeystoneAPI) {
			a.Spec.Override.Service = &keystonev1.ServiceOverrides{Public: &keystonev1.EndpointOverride{EndpointURL: ptr.To("http://")}}
		}), nil, true, verdictOf{false, "Requested", lc.SeverityInfo,
			`waiting for a host in override.service.public.endpointURL "http://" (openstack-operator sets it once its Route has one)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			v, refused := inputGate(tt.api, tt.first)
			g.Expect(refused).To(Equal(tt.refused))
			got := brief(v)
			if tt.want.Message == "" && got.Message != "" {
				got.Message = "" // SpecProblems words it; its own tests say how
			}
			g.Expect(got).To(Equal(tt.want))
		})
	}
	g := NewWithT(t)
	g.Expect(brief(passwordVerdict(api(), false))).To(Equal(verdictOf{false, "DependencyNotFound", lc.SeverityWarning,
		"secret osp-secret with key AdminPassword not found"}))
	g.Expect(brief(passwordVerdict(api(), true))).To(Equal(verdictOf{true, "", "", "admin password found in secret osp-secret"}))
}

func TestTopologyVerdict(t *testing.T) {
	api := func(namespace string) *keystonev1.KeystoneAPI {
		return &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Namespace: "openstack"},
			Spec: keystonev1.KeystoneAPISpec{TopologyRef: &keystonev1.TopoRef{Name: "zones", Namespace: namespace}}}
	}
	spread := []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "zone"}}
	topology := &topologyv1.Topology{ObjectMeta: metav1.ObjectMeta{Name: "zones"},
		Spec: topologyv1.TopologySpec{TopologySpreadConstraints: &spread}}
	tests := []struct {
		name     string
		api      *keystonev1.KeystoneAPI
		topology *topologyv1.Topology
		want     verdictOf
	}{
		{"in another namespace", api("other"), topology, verdictOf{false, "InvalidInput", lc.SeverityError,
			"topologyRef.namespace other: the Topology must be in the KeystoneAPI's namespace openstack"}},
		{"missing", api(""), nil, verdictOf{false, "DependencyNotFound", lc.SeverityWarning, "topology zones not found"}},
		{"found", api("openstack"), topology, verdictOf{true, "", "", "topology zones: 1 spread constraints, affinity false"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(brief(topologyVerdict(tt.api, tt.topology))).To(Equal(tt.want))
		})
	}
}

func TestTLSVerdict(t *testing.T) {
	g := NewWithT(t)
	ca, err := testutil.NewCA("test-ca")
	g.Expect(err).NotTo(HaveOccurred())
	certPEM, keyPEM, err := ca.Issue("keystone-public.openstack.svc")
	g.Expect(err).NotTo(HaveOccurred())
	_, otherKey, err := ca.Issue("other")
	g.Expect(err).NotTo(HaveOccurred())
	cert, err := deploy.ParseKeyPair(certPEM, keyPEM)
	g.Expect(err).NotTo(HaveOccurred())
	until := cert.NotAfter.UTC().Format("2006-01-02")

	api := func(caBundle string, public, internal *string, external bool) *keystonev1.KeystoneAPI {
		a := &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Namespace: "openstack"}}
		a.Spec.TLS.CaBundleSecretName, a.Spec.ExternalKeystoneAPI = caBundle, external
		a.Spec.TLS.API.Public.SecretName, a.Spec.TLS.API.Internal.SecretName = public, internal
		return a
	}
	secret := func(name string, data map[string]string) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, UID: "uid-" + types.UID(name), ResourceVersion: "1"},
			Data: map[string][]byte{}}
		for k, v := range data {
			s.Data[k] = []byte(v)
		}
		return s
	}
	bundle := secret("ca", map[string]string{"tls-ca-bundle.pem": string(ca.PEM)})
	pair := func(name string) *corev1.Secret {
		return secret(name, map[string]string{"tls.crt": string(certPEM), "tls.key": string(keyPEM)})
	}
	all := func(s ...*corev1.Secret) map[string]*corev1.Secret {
		m := map[string]*corev1.Secret{}
		for _, x := range s {
			m[x.Name] = x
		}
		return m
	}
	both := api("ca", ptr.To("pub"), ptr.To("int"), false)
	tests := []struct {
		name    string
		api     *keystonev1.KeystoneAPI
		secrets map[string]*corev1.Secret
		want    verdictOf
		ca      bool // the CA bundle handed on
	}{
		{"no TLS", api("", nil, nil, false), nil, verdictOf{true, "", "", ""}, false},
		{"CA bundle missing", both, nil, verdictOf{false, "DependencyNotFound", lc.SeverityWarning, "secret ca not found"}, false},
		{"CA bundle without its key", both, all(secret("ca", nil)), verdictOf{false, "DependencyNotFound", lc.SeverityWarning,
			"secret ca has no key tls-ca-bundle.pem"}, false},
		{"CA bundle not PEM", both, all(secret("ca", map[string]string{"tls-ca-bundle.pem": "junk"})), verdictOf{false,
			"InvalidCertificate", lc.SeverityWarning, "CA bundle secret ca, key tls-ca-bundle.pem: no PEM certificate"}, false},
		{"one interface alone", api("ca", ptr.To("pub"), nil, false), all(bundle, pair("pub")), verdictOf{false, "InvalidInput",
			lc.SeverityError, "tls.api.public.secretName and tls.api.internal.secretName: both interfaces are served on port 5000, " +
				"so both need a certificate or neither"}, true},
		{"an interface's Secret missing", both, all(bundle, pair("pub")), verdictOf{false, "DependencyNotFound", lc.SeverityWarning,
			"secret int not found"}, true},
		{"a key that does not match", both, all(bundle, pair("pub"), secret("int", map[string]string{"tls.crt": string(certPEM),
			"tls.key": string(otherKey)})), verdictOf{false, "InvalidCertificate", lc.SeverityWarning,
			"certificate secret int of the internal interface: tls: private key does not match public key"}, true},
		{"all valid", both, all(bundle, pair("pub"), pair("int")), verdictOf{true, "", "",
			"CA bundle ca (1 certificates), public certificate pub (valid until " + until + "), internal certificate int (valid until " + until + ")"}, true},
		{"external mode: the CA bundle alone", api("ca", ptr.To("pub"), nil, true), all(bundle), verdictOf{true, "", "",
			"CA bundle ca (1 certificates)"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			v, in := tlsVerdict(tt.api, tt.secrets)
			g.Expect(brief(v)).To(Equal(tt.want))
			g.Expect(in.caBundle != nil).To(Equal(tt.ca))
			if v.True {
				g.Expect(in.revision).NotTo(BeEmpty(), "the revision the pods roll on")
			} else {
				g.Expect(in.revision).To(BeEmpty())
			}
		})
	}
	g.Expect(tlsSecretNames(both)).To(Equal([]string{"ca", "pub", "int"}))
	g.Expect(tlsSecretNames(api("ca", ptr.To("pub"), ptr.To("int"), true))).To(Equal([]string{"ca"}))
}

func TestDroppedCount(t *testing.T) {
	g := NewWithT(t)
	g.Expect(droppedCount(5, 5, false)).To(Equal(0))
	g.Expect(droppedCount(5, 5, true)).To(Equal(1), "a rotation adds the new staged key and drops the oldest secondary")
	g.Expect(droppedCount(100, 5, false)).To(Equal(95))
	g.Expect(droppedCount(3, 5, false)).To(Equal(0), "too few keys are padded, none dropped")
	g.Expect(droppedCount(3, 1, false)).To(Equal(1), "the staged key and the primary always stay")
}

func TestCronJobVerdict(t *testing.T) {
	last := metav1.NewTime(time.Date(2026, 11, 25, 1, 0, 0, 0, time.UTC))
	cron := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "keystone-cron"},
		Spec: batchv1.CronJobSpec{Schedule: "1 * * * *", Suspend: ptr.To(true)}, Status: batchv1.CronJobStatus{LastSuccessfulTime: &last}}
	g := NewWithT(t)
	g.Expect(brief(cronJobVerdict("trustFlushSchedule: bad", nil, ""))).To(Equal(verdictOf{false, "InvalidInput", lc.SeverityError,
		"trustFlushSchedule: bad"}))
	g.Expect(brief(cronJobVerdict("", cron, ""))).To(Equal(verdictOf{true, "", "",
		`cronjob keystone-cron runs keystone-manage trust_flush on schedule "1 * * * *" (suspended); last success at 2026-11-25T01:00:00Z`}))
	g.Expect(brief(cronJobVerdict("", &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "keystone-cron"},
		Spec: batchv1.CronJobSpec{Schedule: "1 * * * *"}}, "(updated once DBSyncReady is True)"))).To(Equal(verdictOf{true, "", "",
		`cronjob keystone-cron runs keystone-manage trust_flush on schedule "1 * * * *" (updated once DBSyncReady is True)`}))
}

func TestExposeVerdict(t *testing.T) {
	api := &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Namespace: "openstack"}}
	tests := []struct {
		name    string
		invalid error
		pending []string
		waiting string
		want    verdictOf
	}{
		{"an override the Services cannot be built from", errors.New("override.service.public: bad"), nil, "",
			verdictOf{false, "InvalidInput", lc.SeverityError, "override.service.public: bad"}},
		{"a LoadBalancer without an address", nil, []string{"keystone-public", "keystone-internal"}, "", verdictOf{false, "Requested",
			lc.SeverityInfo, "LoadBalancer service keystone-public and keystone-internal has no address yet"}},
		{"exposed", nil, nil, "", verdictOf{true, "", "", "services keystone-public and keystone-internal expose port 5000"}},
		{"observed while an earlier step waits", nil, nil, "(updated once DBReady is True)", verdictOf{true, "", "",
			"services keystone-public and keystone-internal expose port 5000 (updated once DBReady is True)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(brief(exposeVerdict(api, tt.invalid, tt.pending, tt.waiting))).To(Equal(tt.want))
		})
	}
}

func TestConfigVerdict(t *testing.T) {
	bad := &inputProblem{condition.InvalidInput, "federatedRealmConfig: bad"}
	tests := []struct {
		name string
		c    configFound
		want verdictOf
	}{
		{"rendered", configFound{secret: "keystone-config-data"}, verdictOf{true, "", "",
			"configuration rendered into secret keystone-config-data"}},
		{"observed while an earlier step waits", configFound{secret: "keystone-config-data", waiting: "(updated once DBReady is True)"},
			verdictOf{true, "", "", "configuration in secret keystone-config-data as rendered before (updated once DBReady is True)"}},
		{"custom configuration missing", configFound{secret: "c", missingCustom: "httpd-custom"}, verdictOf{false, "DependencyNotFound",
			lc.SeverityWarning, "httpdCustomization.customConfigSecret httpd-custom not found"}},
		{"federation's problem", configFound{secret: "c", federation: bad}, verdictOf{false, "InvalidInput", lc.SeverityError,
			"federatedRealmConfig: bad"}},
		{"rendering failed", configFound{secret: "c", renderErr: errors.New("template: boom")}, verdictOf{false, "CreationFailed",
			lc.SeverityError, "rendering the configuration: template: boom"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(brief(configVerdict(tt.c))).To(Equal(tt.want))
			g.Expect(tt.c.renderable()).To(Equal(tt.c.missingCustom == "" && tt.c.federation == nil))
		})
	}
}

func TestFederationFilesOf(t *testing.T) {
	g := NewWithT(t)
	secret := func(content string) *corev1.Secret {
		return &corev1.Secret{Data: map[string][]byte{FederationConfigKey: []byte(content)}}
	}
	_, problem := federationFilesOf("realms", nil)
	g.Expect(*problem).To(Equal(inputProblem{condition.DependencyNotFound, "federatedRealmConfig: secret realms not found"}))
	_, problem = federationFilesOf("realms", &corev1.Secret{})
	g.Expect(*problem).To(Equal(inputProblem{condition.DependencyNotFound,
		"federatedRealmConfig: secret realms has no key federation-config.json"}))
	_, problem = federationFilesOf("realms", secret("[1]"))
	g.Expect(problem.reason).To(Equal(condition.InvalidInput))
	g.Expect(problem.message).To(HavePrefix("federatedRealmConfig: key federation-config.json of secret realms is not a JSON object of file names: "))
	files, problem := federationFilesOf("realms", secret(`{"idp.conf": {"a": 1}}`))
	g.Expect(problem).To(BeNil())
	g.Expect(files).To(Equal(map[string]string{"idp.conf": `{"a": 1}`}))
}

func TestDeletionHeldVerdict(t *testing.T) {
	g := NewWithT(t)
	api := &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Finalizers: []string{
		Finalizer, finalizers.For("keystoneservice", "glance"), finalizers.Upstream("keystoneservice", "nova"),
		finalizers.For("keystoneapplicationcredential", "ac-nova"), "example.com/other"}}}
	holders := registrationHolders(api)
	g.Expect(holders).To(Equal([]string{"KeystoneService glance", "KeystoneService nova", "KeystoneApplicationCredential ac-nova"}))
	g.Expect(brief(deletionHeldVerdict(holders))).To(Equal(verdictOf{false, "Requested", lc.SeverityInfo,
		"deleting: waiting for KeystoneService glance, KeystoneService nova, KeystoneApplicationCredential ac-nova to remove their registrations"}))
}

func TestTrueOnlyVerdicts(t *testing.T) {
	g := NewWithT(t)
	api := &keystonev1.KeystoneAPI{Spec: keystonev1.KeystoneAPISpec{AdminUser: "admin"}}
	waiting := "(updated once DBReady is True)"
	for _, tt := range []struct {
		got  condition.Verdict
		want verdictOf
	}{
		{jobRecordedVerdict("keystone-db-sync", ""), verdictOf{true, "", "", "job keystone-db-sync succeeded for the current inputs"}},
		{jobRecordedVerdict("keystone-bootstrap", "keystone-operator ran it for these inputs"), verdictOf{true, "", "",
			"job keystone-bootstrap not run again: keystone-operator ran it for these inputs"}},
		{jobLaunchedVerdict("keystone-db-sync", false), verdictOf{false, "Created", lc.SeverityInfo, "job keystone-db-sync created"}},
		{jobLaunchedVerdict("keystone-db-sync", true), verdictOf{false, "Created", lc.SeverityInfo,
			"job keystone-db-sync is replaced for new inputs"}},
		{serviceAccountVerdict("keystone-keystone", ""), verdictOf{true, "", "",
			"pods run as ServiceAccount keystone-keystone, which may use SecurityContextConstraints anyuid"}},
		{serviceAccountVerdict("keystone-keystone", waiting), verdictOf{true, "", "",
			"pods run as ServiceAccount keystone-keystone, which may use SecurityContextConstraints anyuid " + waiting}},
		{openStackConfigVerdict(api, ""), verdictOf{true, "", "",
			`ConfigMap openstack-config and Secret openstack-config-secret hold the cloud "default" of user admin`}},
		{openStackConfigVerdict(api, waiting), verdictOf{true, "", "",
			"ConfigMap openstack-config and Secret openstack-config-secret as written before " + waiting}},
	} {
		g.Expect(brief(tt.got)).To(Equal(tt.want))
	}
}

func TestMemcachedMTLSVerdict(t *testing.T) {
	g := NewWithT(t)
	ready := condition.TrueVerdict("Memcached memcached ready with 1 servers")
	secret := func(data map[string]string) *corev1.Secret {
		s := &corev1.Secret{Data: map[string][]byte{}}
		for k, v := range data {
			s.Data[k] = []byte(v)
		}
		return s
	}
	g.Expect(brief(memcachedMTLSVerdict(ready, "memcached", "cert-mtls", nil))).To(Equal(verdictOf{false, "DependencyNotFound",
		lc.SeverityWarning, "Memcached memcached asks for client certificates: secret cert-mtls not found"}))
	g.Expect(brief(memcachedMTLSVerdict(ready, "memcached", "cert-mtls", secret(map[string]string{"tls.crt": "c", "ca.crt": "a"})))).To(
		Equal(verdictOf{false, "DependencyNotFound", lc.SeverityWarning,
			"Memcached memcached asks for client certificates: secret cert-mtls has no key tls.key"}))
	g.Expect(brief(memcachedMTLSVerdict(ready, "memcached", "cert-mtls", secret(map[string]string{"tls.crt": "c", "tls.key": "k", "ca.crt": "a"})))).To(
		Equal(verdictOf{true, "", "", "Memcached memcached ready with 1 servers, client certificate from secret cert-mtls"}))
}
