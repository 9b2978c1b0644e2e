package functional

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/tests/support/fakekeystone"
	"github.com/keystone-stepwise/keystone-operator/tests/support/testutil"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	memcachedv1 "github.com/openstack-k8s-operators/infra-operator/apis/memcached/v1beta1"
	mariadbv1 "github.com/openstack-k8s-operators/mariadb-operator/api/v1beta1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// secretValues collects every password, key and token a scenario used, by what it is.
type secretValues map[string]string

// addSecret adds every value of a Secret's data, named after the Secret and key, but
// those of the keys public names (an application credential's ID is in its status).
func (v secretValues) addSecret(ns, name string, public ...string) {
	GinkgoHelper()
	s := &corev1.Secret{}
	Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, s)).To(Succeed())
	for k, val := range s.Data {
		if len(val) >= 8 && !slices.Contains(public, k) { // shorter values (a count, a flag) are not secrets
			v[fmt.Sprintf("secret %s/%s key %s", ns, name, k)] = string(val)
		}
	}
}

// visible is what anyone who can read a namespace's objects, but not its Secrets' data,
// sees: every object but Secrets whole (spec, status with every condition, labels,
// annotations, ConfigMaps' data, pod templates), Secrets' metadata, and Events.
func visible(ns string) map[string]string {
	GinkgoHelper()
	out := map[string]string{}
	for _, list := range []client.ObjectList{
		&keystonev1.KeystoneAPIList{}, &keystonev1.KeystoneServiceList{}, &keystonev1.KeystoneEndpointList{},
		&keystonev1.KeystoneApplicationCredentialList{}, &corev1.ConfigMapList{}, &corev1.ServiceList{},
		&corev1.EventList{}, &corev1.PodList{}, &batchv1.JobList{}, &appsv1.DeploymentList{},
		&mariadbv1.MariaDBDatabaseList{}, &mariadbv1.MariaDBAccountList{}, &memcachedv1.MemcachedList{},
	} {
		Expect(k8sClient.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		items, err := apimeta.ExtractList(list)
		Expect(err).NotTo(HaveOccurred())
		for _, item := range items {
			obj := item.(client.Object)
			data, err := json.Marshal(obj)
			Expect(err).NotTo(HaveOccurred())
			out[fmt.Sprintf("%T %s", obj, obj.GetName())] = string(data)
		}
	}
	secrets := &corev1.SecretList{}
	Expect(k8sClient.List(ctx, secrets, client.InNamespace(ns))).To(Succeed())
	for i := range secrets.Items {
		data, err := json.Marshal(secrets.Items[i].ObjectMeta)
		Expect(err).NotTo(HaveOccurred())
		out["Secret metadata "+secrets.Items[i].Name] = string(data)
	}
	return out
}

var _ = Describe("Nothing leaked", func() {
	It("no password, key or token of a rollout, registration, rotation and deletion appears in logs, Events, conditions, ConfigMaps, labels or annotations", func() {
		probe := "Leak-Probe-" + rand.String(10)
		values := secretValues{}
		seen := map[string]string{}
		look := func(ns string) {
			for k, v := range visible(ns) {
				seen[time.Now().Format(time.RFC3339Nano)+" "+k] = v
			}
		}

		By("a KeystoneAPI rolled out, its admin password changed, its fernet keys rotated, its configuration changed")
		deployed := newNamespace()
		key := deployReady(deployed)
		values["the first admin password"] = "secret-admin"
		values.addSecret(deployed, deploy.DBSecretName(getAPI(key)(Default)))
		values.addSecret(deployed, deploy.KeysSecretName(getAPI(key)(Default)))
		values.addSecret(deployed, deploy.PrivateStateSecretName(getAPI(key)(Default)))
		look(deployed)
		setSecretKey(deployed, "osp-secret", "AdminPassword", "Admin-"+probe)
		values["the second admin password"] = "Admin-" + probe
		expectConditions(key, condition{"BootstrapReady", "False", "Created", "Info"})
		finishJob(deployed, "keystone-bootstrap", true, "")
		expectConditions(key, condition{"Ready", "True", "Ready", ""})
		keys := func(g Gomega) []string {
			s := &corev1.Secret{}
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: deployed, Name: "keystone"}, s)).To(Succeed())
			return deploy.FernetKeys(s.Data)
		}
		before := keys(Default)
		testClock.Advance(25 * time.Hour)
		// The operator's clock is shared by every spec: set back afterwards.
		DeferCleanup(func() { testClock.Advance(-(25 * time.Hour)) })
		touch(key)
		Eventually(keys).ShouldNot(Equal(before), "rotated")
		values.addSecret(deployed, "keystone")
		updateAPI(key, func(a *keystonev1.KeystoneAPI) { a.Spec.CustomServiceConfig = "[DEFAULT]\ndebug = true\n" })
		expectConditions(key, condition{"DBSyncReady", "False", "Created", "Info"})
		finishJob(deployed, "keystone-db-sync", true, "")
		expectConditions(key, condition{"DeploymentReady", "False", "Created", "Info"})
		rollOut(deployed, "keystone", 1)
		expectConditions(key, condition{"Ready", "True", "Ready", ""})
		look(deployed)

		By("a service registered in an external Keystone, its password rotated, an endpoint and an application credential")
		ks := fakekeystone.New("admin", "Ext-Admin-"+probe)
		DeferCleanup(ks.Close)
		values["the external admin password"] = "Ext-Admin-" + probe
		registered := newNamespace()
		api := externalKeystoneAPI(registered)
		api.Spec.Override.Service.Internal.EndpointURL = ptr.To(ks.URL)
		Expect(k8sClient.Create(ctx, api)).To(Succeed())
		createSecret(registered, "osp-secret", map[string]string{"AdminPassword": "Ext-Admin-" + probe, "GlancePassword": "Glance-1-" + probe})
		values["the first service password"] = "Glance-1-" + probe
		Expect(k8sClient.Create(ctx, keystoneService(registered))).To(Succeed())
		Expect(k8sClient.Create(ctx, keystoneEndpoint(registered))).To(Succeed())
		Expect(k8sClient.Create(ctx, applicationCredential(registered))).To(Succeed())
		svcKey := types.NamespacedName{Namespace: registered, Name: "glance"}
		acKey := types.NamespacedName{Namespace: registered, Name: "ac-glance"}
		expectServiceConditions(svcKey, condition{"Ready", "True", "Ready", ""})
		expectAppCredConditions(acKey, condition{"Ready", "True", "Ready", ""})
		values.addSecret(registered, getAppCred(acKey)(Default).Status.SecretName, keystonev1.ACIDSecretKey)
		values.addSecret(registered, deploy.CleanupSecretName(api))
		look(registered)
		setSecretKey(registered, "osp-secret", "GlancePassword", "Glance-2-"+probe)
		values["the second service password"] = "Glance-2-" + probe
		Eventually(func() bool { return canAuthenticate(ks.URL, "glance", "Glance-2-"+probe) }).Should(BeTrue())
		first := getAppCred(acKey)(Default).Status.SecretName
		update(acKey, &keystonev1.KeystoneApplicationCredential{}, func(ac *keystonev1.KeystoneApplicationCredential) {
			ac.Spec.Roles = []string{"service", "admin"}
		})
		Eventually(func() string { return getAppCred(acKey)(Default).Status.SecretName }).ShouldNot(Equal(first))
		expectAppCredConditions(acKey, condition{"Ready", "True", "Ready", ""})
		values.addSecret(registered, getAppCred(acKey)(Default).Status.SecretName, keystonev1.ACIDSecretKey)
		look(registered)

		By("a KeystoneAPI over HTTPS that sends notifications")
		secured := newNamespace()
		ca, err := testutil.NewCA("leak-probe-ca")
		Expect(err).NotTo(HaveOccurred())
		tlsAPI := keystoneAPI(secured)
		withTLS(tlsAPI)
		tlsAPI.Spec.NotificationsBus = &keystonev1.NotificationsBus{Cluster: "rabbitmq"}
		tlsKey := createWithoutDatabase(tlsAPI)
		for _, iface := range []string{"public", "internal"} {
			cert, certKey, err := ca.Issue("keystone-" + iface + "." + secured + ".svc")
			Expect(err).NotTo(HaveOccurred())
			createSecret(secured, "cert-keystone-"+iface+"-svc", map[string]string{"tls.crt": string(cert), "tls.key": string(certKey)})
			values.addSecret(secured, "cert-keystone-"+iface+"-svc", "tls.crt")
		}
		createSecret(secured, "combined-ca-bundle", map[string]string{"tls-ca-bundle.pem": string(ca.PEM)})
		markDatabaseReady(secured, galera)
		playTransportURL(secured, "keystone-keystone-transport", "rabbit://keystone:Rabbit-"+probe+"@rabbitmq."+secured+".svc:5671/?ssl=1")
		values["the RabbitMQ password"] = "Rabbit-" + probe
		finishRollout(tlsKey, 1)
		values.addSecret(secured, deploy.DBSecretName(getAPI(tlsKey)(Default)))
		look(secured)

		By("httpd customization snippets whose errors try to show the database password and the transport URL")
		// keystone-operator's parameters hold both (DatabaseConnection, TransportURL): a
		// snippet may write them into the configuration, never into a condition or an Event.
		createSecret(secured, "httpd-probe", map[string]string{"probe.conf": "# nothing yet"})
		updateAPI(tlsKey, func(a *keystonev1.KeystoneAPI) { a.Spec.HttpdCustomization.CustomConfigSecret = ptr.To("httpd-probe") })
		for i, snippet := range []string{`{{ .DatabasePassword }}`, `{{ execTempl .DatabaseConnection . }}`,
			`{{ execTempl .TransportURL . }}`, `{{ execTempl (slice .TransportURL 8 30) . }}`,
			`{{ index .TransportURL 0 | slice "abc" }}`, `{{ slice (printf "%v" .) 0 100000 }}`} {
			// A file name of its own, so the wait sees this snippet's error, not the last one's.
			file := fmt.Sprintf("probe-%d.conf", i)
			update(types.NamespacedName{Namespace: secured, Name: "httpd-probe"}, &corev1.Secret{}, func(s *corev1.Secret) {
				s.Data = map[string][]byte{file: []byte(snippet)}
			})
			Eventually(func(g Gomega) {
				c := getAPI(tlsKey)(g).Status.Conditions.Get("ServiceConfigReady")
				g.Expect(c).NotTo(BeNil())
				g.Expect(c.Reason).To(BeEquivalentTo("CreationFailed"))
				g.Expect(c.Message).To(ContainSubstring(file))
			}).Should(Succeed(), snippet)
			look(secured)
		}
		updateAPI(tlsKey, func(a *keystonev1.KeystoneAPI) { a.Spec.HttpdCustomization.CustomConfigSecret = nil })

		By("everything deleted")
		for _, obj := range []client.Object{getAppCred(acKey)(Default), getEndpoint(svcKey)(Default), getService(svcKey)(Default),
			getAPI(client.ObjectKeyFromObject(api))(Default), getAPI(key)(Default), getAPI(tlsKey)(Default)} {
			Expect(k8sClient.Delete(ctx, obj)).To(Succeed())
		}
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(api), &keystonev1.KeystoneAPI{}))
		}, 20*time.Second).Should(BeTrue())
		look(registered)
		look(deployed)
		look(secured)
		for i, token := range ks.Tokens() {
			values[fmt.Sprintf("Keystone token %d", i)] = token
		}
		Expect(ks.Tokens()).NotTo(BeEmpty())
		seen["the operator's log"] = operatorLog.String()
		Expect(seen["the operator's log"]).To(ContainSubstring(registered), "the log was captured")

		By(fmt.Sprintf("searching %d snapshots for %d values", len(seen), len(values)))
		for what, value := range values {
			for where, text := range seen {
				Expect(strings.Contains(text, value)).To(BeFalse(), "%s appears in %s", what, where)
			}
		}
	})
})
