package keystoneapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	memcachedv1 "github.com/openstack-k8s-operators/infra-operator/apis/memcached/v1beta1"
	rabbitmqv1 "github.com/openstack-k8s-operators/infra-operator/apis/rabbitmq/v1beta1"
	topologyv1 "github.com/openstack-k8s-operators/infra-operator/apis/topology/v1beta1"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	"github.com/openstack-k8s-operators/lib-common/modules/common/networkattachment"
	libtls "github.com/openstack-k8s-operators/lib-common/modules/common/tls"
	mariadbv1 "github.com/openstack-k8s-operators/mariadb-operator/api/v1beta1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// The decisions of KeystoneAPI's steps: pure functions from what a phase observed to
// the step's verdict, each covered reason by reason in status_test.go.

// rolloutVerdict is DeploymentReady from the Deployment: True once every replica of the
// current spec is updated and available (and, while an earlier step is not True,
// saying the pods keep their configuration until waitingFor is); a rollout in progress
// is Created (Info); a progress deadline exceeded is CreationFailed (Error).
func rolloutVerdict(dep *appsv1.Deployment, waitingFor lc.Type) condition.Verdict {
	want, deadline := ptr.Deref(dep.Spec.Replicas, 1), deadlineExceeded(dep)
	switch {
	case dep.Status.ObservedGeneration < dep.Generation:
		return condition.FalseVerdict(condition.Created, "deployment %s: rollout of the new spec starting", dep.Name)
	case deadline != "":
		return condition.FalseVerdict(condition.CreationFailed, "deployment %s exceeded its progress deadline: %s", dep.Name, deadline)
	case dep.Status.UpdatedReplicas == want && dep.Status.AvailableReplicas == want && dep.Status.Replicas == want:
		msg := fmt.Sprintf("deployment %s: %d/%d replicas ready", dep.Name, dep.Status.ReadyReplicas, want)
		if waitingFor != "" {
			msg += fmt.Sprintf("; its pods keep their configuration until %s is True", waitingFor)
		}
		return condition.TrueVerdict("%s", msg)
	}
	return condition.FalseVerdict(condition.Created, "deployment %s: %d/%d replicas ready, %d updated", dep.Name,
		dep.Status.ReadyReplicas, want, dep.Status.UpdatedReplicas)
}

// attachmentsMissingVerdict is DeploymentReady while NetworkAttachmentDefinitions the
// spec names do not exist (missing): DependencyNotFound (Warning), the Deployment left
// as it is.
func attachmentsMissingVerdict(missing []string) condition.Verdict {
	return condition.FalseVerdict(condition.DependencyNotFound, "NetworkAttachmentDefinition %s not found (networkAttachments)",
		strings.Join(missing, ", "))
}

// jobVerdict is DBSyncReady or BootstrapReady from the step's Job: True once it
// completed; CreationFailed (Error) once it failed, with the Job's attempts and reason
// and podFailure (what its last failed pod said, "" for nothing); Created (Info) while
// it runs.
func jobVerdict(job *batchv1.Job, podFailure string) condition.Verdict {
	switch {
	case finished(job, batchv1.JobComplete):
		return condition.TrueVerdict("job %s succeeded", job.Name)
	case finished(job, batchv1.JobFailed):
		msg := fmt.Sprintf("job %s failed after %d attempts", job.Name, job.Status.Failed)
		for _, c := range job.Status.Conditions {
			if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
				msg += fmt.Sprintf(" (%s: %s)", c.Reason, c.Message)
			}
		}
		if podFailure != "" {
			msg += "; " + podFailure
		}
		return condition.FalseVerdict(condition.CreationFailed, "%s", msg)
	}
	return condition.FalseVerdict(condition.Created, "job %s running (%d failed attempts so far)", job.Name, job.Status.Failed)
}

// jobRecordedVerdict is DBSyncReady or BootstrapReady when the job named name need not
// run: True, its success for the current inputs recorded, or why it is not run again
// (keystone-operator ran it for these inputs).
func jobRecordedVerdict(name, why string) condition.Verdict {
	if why != "" {
		return condition.TrueVerdict("job %s not run again: %s", name, why)
	}
	return condition.TrueVerdict("job %s succeeded for the current inputs", name)
}

// jobLaunchedVerdict is DBSyncReady or BootstrapReady the round it created the job named
// name, or deleted one of other inputs to replace it (replacing): Created (Info).
func jobLaunchedVerdict(name string, replacing bool) condition.Verdict {
	if replacing {
		return condition.FalseVerdict(condition.Created, "job %s is replaced for new inputs", name)
	}
	return condition.FalseVerdict(condition.Created, "job %s created", name)
}

// memcachedVerdict is MemcachedReady from the Memcached named name (nil when it does
// not exist: DependencyNotFound): its Ready mirrored, then True once it lists servers.
func memcachedVerdict(name string, mc *memcachedv1.Memcached) condition.Verdict {
	if mc == nil {
		return condition.FalseVerdict(condition.DependencyNotFound, "Memcached %s not found", name)
	}
	if v := condition.Mirror("Memcached", mc.Name, mc.Status.Conditions); !v.True {
		return v
	}
	if len(mc.Status.ServerList) == 0 {
		return condition.FalseVerdict(condition.Requested, "Memcached %s is ready but lists no servers yet", mc.Name)
	}
	return condition.TrueVerdict("Memcached %s ready with %d servers", mc.Name, len(mc.Status.ServerList))
}

// memcachedMTLSVerdict is MemcachedReady once the Memcached is ready (ready) and asks
// for client certificates: the Secret name (nil: missing) must hold the certificate,
// its key and the CA, which the pods mount; DependencyNotFound (Warning) until it does.
func memcachedMTLSVerdict(ready condition.Verdict, memcached, name string, secret *corev1.Secret) condition.Verdict {
	if missing := missingKeys(name, secret, libtls.CertKey, libtls.PrivateKey, libtls.CAKey); missing != "" {
		return condition.FalseVerdict(condition.DependencyNotFound, "Memcached %s asks for client certificates: %s", memcached, missing)
	}
	return condition.TrueVerdict("%s, client certificate from secret %s", ready.Message, name)
}

// transportURLVerdict is RabbitMqTransportURLReady from the TransportURL of the
// notifications to cluster and secretProblem (what is wrong with the Secret it names, ""
// for nothing): its Ready mirrored, then its Secret waited for (Requested), then
// DependencyNotFound while the Secret lacks the URL.
func transportURLVerdict(tu *rabbitmqv1.TransportURL, cluster, secretProblem string) condition.Verdict {
	switch v := condition.Mirror("TransportURL", tu.Name, tu.Status.Conditions); {
	case !v.True:
		return v
	case tu.Status.SecretName == "":
		return condition.FalseVerdict(condition.Requested, "TransportURL %s: waiting for its secret", tu.Name)
	case secretProblem != "":
		return condition.FalseVerdict(condition.DependencyNotFound, "TransportURL %s: %s", tu.Name, secretProblem)
	}
	return condition.TrueVerdict("notifications go to RabbitMQ cluster %s through TransportURL %s", cluster, tu.Name)
}

// databaseVerdict is DBReady from the MariaDBDatabase and MariaDBAccount, whether the
// account's Secret holds its password, and the host of the database instance's Service
// ("" while there is none): both Ready mirrored, the database first; then the
// password (DependencyNotFound); then the Service (Requested).
func databaseVerdict(db *mariadbv1.MariaDBDatabase, account *mariadbv1.MariaDBAccount, passwordFound bool,
	instance, host string) condition.Verdict {
	if v := condition.Mirror("MariaDBDatabase", db.Name, db.Status.Conditions); !v.True {
		return v
	}
	if v := condition.Mirror("MariaDBAccount", account.Name, account.Status.Conditions); !v.True {
		return v
	}
	switch {
	case !passwordFound:
		return condition.FalseVerdict(condition.DependencyNotFound, "secret %s of MariaDBAccount %s with key %s not found",
			account.Spec.Secret, account.Name, mariadbv1.DatabasePasswordSelector)
	case host == "":
		return condition.FalseVerdict(condition.Requested, "waiting for the Service of database instance %s", instance)
	}
	return condition.TrueVerdict("database %s ready at %s", deploy.DatabaseName, host)
}

// networksVerdict is NetworkAttachmentsReady from Keystone's pods: True once every pod
// reports an address on each of attachments in Multus's network-status annotation;
// Requested (Info) while some do not; ServiceUnavailable (Warning) for an annotation
// that cannot be read. It also returns status.networkAttachments, the addresses per
// "namespace/attachment", sorted (nil when an annotation cannot be read).
func networksVerdict(namespace string, attachments []string, pods []corev1.Pod) (condition.Verdict, map[string][]string) {
	addresses := map[string][]string{}
	for i := range pods {
		status, err := networkattachment.GetNetworkStatusFromAnnotation(pods[i].Annotations)
		if err != nil {
			return condition.FalseVerdict(condition.ServiceUnavailable, "pod %s: %v", pods[i].Name, err), nil
		}
		for _, st := range status {
			addresses[st.Name] = append(addresses[st.Name], st.IPs...)
		}
	}
	attached := map[string][]string{}
	var short []string
	for _, name := range attachments {
		key := namespace + "/" + name
		ips := addresses[key]
		slices.Sort(ips)
		attached[key] = ips
		if len(ips) < len(pods) {
			short = append(short, fmt.Sprintf("%s (%d of %d pods)", name, len(ips), len(pods)))
		}
	}
	if len(short) > 0 {
		return condition.FalseVerdict(condition.Requested, "pods without an address on %s", strings.Join(short, ", ")), attached
	}
	return condition.TrueVerdict("%d pods attached to %s", len(pods), strings.Join(attachments, ", ")), attached
}

// severityRank orders a registration's Ready by severity (condition.SeverityRank);
// without a Ready yet, as Info.
func severityRank(c *lc.Condition) int {
	if c == nil {
		return 0
	}
	return condition.SeverityRank(c.Severity)
}

// kindRank orders the registration kinds as they depend on each other.
var kindRank = map[string]int{"KeystoneService": 0, "KeystoneEndpoint": 1, "KeystoneApplicationCredential": 2}

// registrationsVerdict is the consolidated view of a namespace's registrations: how
// many of each kind exist and are Ready, and RegistrationsReady: True when every one is
// Ready (or there is none); else False for the most severe registration that is not
// (Error, then Warning, then by kind and name), with its Ready reason, severity and
// message; while none fails, Requested (Info) naming how many are not ready yet.
func registrationsVerdict(regs []registration) (keystonev1.KeystoneAPIRegistrations, condition.Verdict) {
	var counts keystonev1.KeystoneAPIRegistrations
	var worst *registration
	countOf := map[string]*keystonev1.RegistrationCount{"KeystoneService": &counts.KeystoneServices,
		"KeystoneEndpoint": &counts.KeystoneEndpoints, "KeystoneApplicationCredential": &counts.KeystoneApplicationCredentials}
	notReady := 0
	for i := range regs {
		reg := &regs[i]
		count := countOf[reg.kind]
		count.Total++
		if reg.ready != nil && reg.ready.Status == corev1.ConditionTrue {
			count.Ready++
			continue
		}
		notReady++
		if worst == nil || severityRank(reg.ready) > severityRank(worst.ready) ||
			(severityRank(reg.ready) == severityRank(worst.ready) &&
				(kindRank[reg.kind] < kindRank[worst.kind] || (reg.kind == worst.kind && reg.name < worst.name))) {
			worst = reg
		}
	}
	switch {
	case len(regs) == 0:
		return counts, condition.TrueVerdict("no KeystoneService, KeystoneEndpoint or KeystoneApplicationCredential in the namespace")
	case worst == nil:
		return counts, condition.TrueVerdict("all %d registrations ready (KeystoneServices: %d, KeystoneEndpoints: %d, "+
			"KeystoneApplicationCredentials: %d)", len(regs), counts.KeystoneServices.Total, counts.KeystoneEndpoints.Total,
			counts.KeystoneApplicationCredentials.Total)
	case severityRank(worst.ready) > 0:
		return counts, condition.FalseVerdict(condition.Reason{Name: worst.ready.Reason, Severity: worst.ready.Severity},
			"%s %s: %s (%d of %d registrations not ready)", worst.kind, worst.name, worst.ready.Message, notReady, len(regs))
	}
	return counts, condition.FalseVerdict(condition.Requested, "%d of %d registrations not ready yet, among them %s %s",
		notReady, len(regs), worst.kind, worst.name)
}

// inputGate is InputReady before the admin password is read, from the namespace's first
// KeystoneAPI: refused (the round halts) for any other one of the namespace (InvalidInput),
// for a spec no object can be made from (InvalidInput), and while openstack-operator has
// not yet written an endpoint's host (Requested).
func inputGate(api, first *keystonev1.KeystoneAPI) (v condition.Verdict, refused bool) {
	if first != nil && first.UID != api.UID {
		return condition.FalseVerdict(condition.InvalidInput, "KeystoneAPI %s already deploys Keystone in namespace %s; "+
			"one KeystoneAPI per namespace: delete this one", first.Name, api.Namespace), true
	}
	if problems := deploy.SpecProblems(api); len(problems) > 0 {
		return condition.FalseVerdict(condition.InvalidInput, "%s", strings.Join(problems, "; ")), true
	}
	if pending := deploy.PendingEndpoints(api); len(pending) > 0 {
		return condition.FalseVerdict(condition.Requested, "waiting for a host in %s (openstack-operator sets it once its "+
			"Route has one)", strings.Join(pending, " and ")), true
	}
	return condition.Verdict{}, false
}

// passwordVerdict is InputReady once the gate passed: True when the admin password's
// Secret holds its key, else DependencyNotFound.
func passwordVerdict(api *keystonev1.KeystoneAPI, found bool) condition.Verdict {
	if !found {
		return condition.FalseVerdict(condition.DependencyNotFound, "secret %s with key %s not found", api.Spec.Secret,
			api.Spec.PasswordSelectors.Admin)
	}
	return condition.TrueVerdict("admin password found in secret %s", api.Spec.Secret)
}

// topologyVerdict is TopologyReady from the Topology of topologyRef (nil when it does not
// exist): InvalidInput for one in another namespace, DependencyNotFound while it is
// missing, True with what it holds.
func topologyVerdict(api *keystonev1.KeystoneAPI, topology *topologyv1.Topology) condition.Verdict {
	ref := api.Spec.TopologyRef
	switch {
	case ref.Namespace != "" && ref.Namespace != api.Namespace:
		return condition.FalseVerdict(condition.InvalidInput, "topologyRef.namespace %s: the Topology must be in the "+
			"KeystoneAPI's namespace %s", ref.Namespace, api.Namespace)
	case topology == nil:
		return condition.FalseVerdict(condition.DependencyNotFound, "topology %s not found", ref.Name)
	}
	n := 0
	if c := topology.Spec.TopologySpreadConstraints; c != nil {
		n = len(*c)
	}
	return condition.TrueVerdict("topology %s: %d spread constraints, affinity %t", ref.Name, n, topology.Spec.Affinity != nil)
}

// missingKeys says what is missing of the Secret name (nil when it does not exist)
// that must hold keys: the Secret, or its first key that is empty; "" for nothing.
func missingKeys(name string, secret *corev1.Secret, keys ...string) string {
	if secret == nil {
		return fmt.Sprintf("secret %s not found", name)
	}
	for _, k := range keys {
		if len(secret.Data[k]) == 0 {
			return fmt.Sprintf("secret %s has no key %s", name, k)
		}
	}
	return ""
}

// tlsInputs is what TLSInputReady hands the later steps: the CA bundle (once it is
// valid) and the revision of the Secrets the pods mount (once all are).
type tlsInputs struct {
	caBundle []byte
	revision string
}

// tlsVerdict is TLSInputReady from the Secrets tlsSecretNames names (secrets, by name;
// one missing does not exist): the CA bundle Secret holds PEM certificates, and each
// interface's Secret a certificate and the key that matches it; httpd serves both
// interfaces on one port, so both have a certificate or neither. A Secret or key
// missing is DependencyNotFound and one that does not parse InvalidCertificate (both
// Warning: a certificate may be on its way), one interface alone InvalidInput (Error).
func tlsVerdict(api *keystonev1.KeystoneAPI, secrets map[string]*corev1.Secret) (condition.Verdict, tlsInputs) {
	var in tlsInputs
	revisions := map[string]string{}
	var found []string
	if name := api.Spec.TLS.CaBundleSecretName; name != "" {
		secret := secrets[name]
		if missing := missingKeys(name, secret, libtls.CABundleKey); missing != "" {
			return condition.FalseVerdict(condition.DependencyNotFound, "%s", missing), in
		}
		_, n, err := deploy.ParseCABundle(secret.Data[libtls.CABundleKey])
		if err != nil {
			return condition.FalseVerdict(invalidCertificate, "CA bundle secret %s, key %s: %v", name, libtls.CABundleKey, err), in
		}
		in.caBundle = secret.Data[libtls.CABundleKey]
		revisions["ca"] = string(secret.UID) + "/" + secret.ResourceVersion
		found = append(found, fmt.Sprintf("CA bundle %s (%d certificates)", name, n))
	}
	if !api.Spec.ExternalKeystoneAPI {
		if deploy.TLSEnabled(api, keystonev1.EndpointPublic) != deploy.TLSEnabled(api, keystonev1.EndpointInternal) {
			return condition.FalseVerdict(condition.InvalidInput, "tls.api.public.secretName and tls.api.internal.secretName: "+
				"both interfaces are served on port %d, so both need a certificate or neither", deploy.Port), in
		}
		for _, iface := range deploy.Interfaces {
			name := deploy.TLSSecretName(api, iface)
			if name == "" {
				continue
			}
			secret := secrets[name]
			if missing := missingKeys(name, secret, libtls.CertKey, libtls.PrivateKey); missing != "" {
				return condition.FalseVerdict(condition.DependencyNotFound, "%s", missing), in
			}
			cert, err := deploy.ParseKeyPair(secret.Data[libtls.CertKey], secret.Data[libtls.PrivateKey])
			if err != nil {
				return condition.FalseVerdict(invalidCertificate, "certificate secret %s of the %s interface: %v", name, iface, err), in
			}
			revisions[iface] = string(secret.UID) + "/" + secret.ResourceVersion
			found = append(found, fmt.Sprintf("%s certificate %s (valid until %s)", iface, name, cert.NotAfter.UTC().Format("2006-01-02")))
		}
	}
	in.revision = deploy.Hash(revisions)
	return condition.TrueVerdict("%s", strings.Join(found, ", ")), in
}

// keysFound is what FernetKeysReady observed of the keys Secret.
type keysFound struct {
	secret         string // its name
	created        string // how this round made it ("" when it existed)
	credentialKeys int
	fernetKeys     int
	sched          fernetSchedule
	waiting        string // while an earlier step is not True, when the keys are rotated again; else ""
	now            time.Time
	// problems say which keys cannot be used as they are (deploy.KeyRepository.Problems).
	problems []string
}

// usable tells whether the keys may be used and rotated: credential keys are never
// made up (new ones could not decrypt the credential table).
func (k keysFound) usable() bool {
	return k.credentialKeys >= deploy.CredentialKeyCount && len(k.problems) == 0
}

// keysVerdict is FernetKeysReady from the keys Secret: FernetCreated (Info) the round
// it is made; InvalidInput (Error) while it lacks credential keys; an unreadable
// rotation time InvalidAnnotation (Warning: the keys were rotated now); else True with
// the next rotation.
func keysVerdict(k keysFound) condition.Verdict {
	next := k.sched.due.UTC().Format(time.RFC3339)
	switch {
	case k.created != "":
		return condition.FalseVerdict(fernetCreated, "fernet and credential keys %s secret %s", k.created, k.secret)
	case len(k.problems) > 0:
		return condition.FalseVerdict(condition.InvalidInput, "secret %s cannot be used as it is, and nothing in it was rewritten: %s",
			k.secret, strings.Join(k.problems, "; "))
	case !k.usable():
		return condition.FalseVerdict(condition.InvalidInput, "secret %s holds %d of the %d credential keys "+
			"(CredentialKeys0..%d): add the keys of the repository Keystone's credentials were encrypted with",
			k.secret, k.credentialKeys, deploy.CredentialKeyCount, deploy.CredentialKeyCount-1)
	case k.waiting != "":
		return condition.TrueVerdict("%d fernet keys in secret %s, next rotation at %s %s", k.fernetKeys, k.secret, next, k.waiting)
	case k.sched.malformed:
		return condition.FalseVerdict(invalidAnnotation, "annotation %s=%q of secret %s is not an RFC 3339 time (such as %s): "+
			"the keys were rotated now, and the next rotation is at %s", deploy.RotatedAtAnnotation, k.sched.raw, k.secret,
			k.now.UTC().Format(time.RFC3339), next)
	}
	return condition.TrueVerdict("%d fernet keys in secret %s, next rotation at %s", k.fernetKeys, k.secret, next)
}

// cronJobVerdict is CronJobReady from the trust flush CronJob: InvalidInput (Error) for
// a schedule that problem says is wrong, else True saying what it runs, when, and
// (waiting) when it is updated again.
func cronJobVerdict(problem string, cron *batchv1.CronJob, waiting string) condition.Verdict {
	if problem != "" {
		return condition.FalseVerdict(condition.InvalidInput, "%s", problem)
	}
	msg := fmt.Sprintf("cronjob %s runs keystone-manage trust_flush on schedule %q", cron.Name, cron.Spec.Schedule)
	if ptr.Deref(cron.Spec.Suspend, false) {
		msg += " (suspended)"
	}
	if t := cron.Status.LastSuccessfulTime; t != nil {
		msg += "; last success at " + t.UTC().Format(time.RFC3339)
	}
	if waiting != "" {
		msg += " " + waiting
	}
	return condition.TrueVerdict("%s", msg)
}

// exposeVerdict is ExposeServiceReady from the Services: InvalidInput (Error) for an
// override they cannot be built from (invalid); Requested (Info) while a LoadBalancer
// has no address (pending); else True.
func exposeVerdict(api *keystonev1.KeystoneAPI, invalid error, pending []string, waiting string) condition.Verdict {
	switch {
	case invalid != nil:
		return condition.FalseVerdict(condition.InvalidInput, "%v", invalid)
	case len(pending) > 0:
		return condition.FalseVerdict(condition.Requested, "LoadBalancer service %s has no address yet", strings.Join(pending, " and "))
	}
	msg := fmt.Sprintf("services %s and %s expose port %d", deploy.ServiceName(api, keystonev1.EndpointPublic),
		deploy.ServiceName(api, keystonev1.EndpointInternal), deploy.Port)
	if waiting != "" {
		msg += " " + waiting
	}
	return condition.TrueVerdict("%s", msg)
}

// inputProblem is why an input cannot be used, as the step reports it.
type inputProblem struct {
	reason  condition.Reason
	message string
}

// configFound is what ServiceConfigReady observed.
type configFound struct {
	secret        string        // the configuration Secret's name
	waiting       string        // while an earlier step is not True, when it is rendered again; else ""
	missingCustom string        // httpdCustomization.customConfigSecret, named but not found
	federation    *inputProblem // what is wrong with federatedRealmConfig
	renderErr     error
}

// renderable tells whether the configuration can be rendered from the inputs.
func (c configFound) renderable() bool { return c.missingCustom == "" && c.federation == nil }

// configVerdict is ServiceConfigReady: True for the configuration rendered into its
// Secret (or, while an earlier step is not True, as rendered before); a custom
// configuration Secret missing is DependencyNotFound (Warning), federatedRealmConfig's
// problem has its own reason, and a rendering that fails is CreationFailed (Error).
func configVerdict(c configFound) condition.Verdict {
	switch {
	case c.waiting != "":
		return condition.TrueVerdict("configuration in secret %s as rendered before %s", c.secret, c.waiting)
	case c.missingCustom != "":
		return condition.FalseVerdict(condition.DependencyNotFound, "httpdCustomization.customConfigSecret %s not found", c.missingCustom)
	case c.federation != nil:
		return condition.FalseVerdict(c.federation.reason, "%s", c.federation.message)
	case c.renderErr != nil:
		return condition.FalseVerdict(condition.CreationFailed, "rendering the configuration: %v", c.renderErr)
	}
	return condition.TrueVerdict("configuration rendered into secret %s", c.secret)
}

// federationFilesOf reads the federated realms' metadata files from the Secret name of
// federatedRealmConfig (nil when it does not exist): DependencyNotFound (Warning) for
// the Secret or its key missing, InvalidInput (Error) for a key that is not a JSON
// object of file names.
func federationFilesOf(name string, secret *corev1.Secret) (map[string]string, *inputProblem) {
	if missing := missingKeys(name, secret, FederationConfigKey); missing != "" {
		return nil, &inputProblem{condition.DependencyNotFound, "federatedRealmConfig: " + missing}
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(secret.Data[FederationConfigKey], &raw); err != nil {
		return nil, &inputProblem{condition.InvalidInput, fmt.Sprintf("federatedRealmConfig: key %s of secret %s is not a JSON object of file names: %v",
			FederationConfigKey, name, err)}
	}
	files := make(map[string]string, len(raw))
	for file, content := range raw {
		files[file] = string(content)
	}
	return files, nil
}

// externalVerdict is KeystoneEndpointReady in external mode from authenticating the
// admin at url (err: how it failed): a Keystone that refuses the credentials is
// InvalidInput (Error), one that cannot be reached ServiceUnavailable (Warning).
func externalVerdict(api *keystonev1.KeystoneAPI, url string, err error) condition.Verdict {
	switch {
	case err == nil:
		return condition.TrueVerdict("admin %s authenticated at %s", api.Spec.AdminUser, url)
	case gophercloud.ResponseCodeIs(err, http.StatusUnauthorized):
		return condition.FalseVerdict(condition.InvalidInput, "Keystone at %s refused the credentials of admin %s in project %s",
			url, api.Spec.AdminUser, api.Spec.AdminProject)
	}
	return condition.FalseVerdict(condition.ServiceUnavailable, "Keystone at %s: %v", url, err)
}

// deletionHeldVerdict is InputReady while a KeystoneAPI being deleted is held by the
// registrations of its namespace (holders, by kind and name): Requested (Info), each
// removes its registration from Keystone first.
func deletionHeldVerdict(holders []string) condition.Verdict {
	return condition.FalseVerdict(condition.Requested, "deleting: waiting for %s to remove their registrations", strings.Join(holders, ", "))
}

// serviceAccountVerdict is ServiceAccountReady once the ServiceAccount sa, its Role and
// RoleBinding exist (while an earlier step is not True, waiting says when they are
// updated again); what keeps them from existing is an error, retried.
func serviceAccountVerdict(sa, waiting string) condition.Verdict {
	msg := fmt.Sprintf("pods run as ServiceAccount %s, which may use SecurityContextConstraints %s", sa, deploy.AnyUIDSCC)
	if waiting != "" {
		msg += " " + waiting
	}
	return condition.TrueVerdict("%s", msg)
}

// openStackConfigVerdict is OpenStackConfigReady once openstack-config and its Secret
// describe the admin's cloud (while an earlier step is not True, waiting says when they
// are written again); what keeps them from being written is an error, retried.
func openStackConfigVerdict(api *keystonev1.KeystoneAPI, waiting string) condition.Verdict {
	if waiting != "" {
		return condition.TrueVerdict("ConfigMap %s and Secret %s as written before %s", deploy.OpenStackConfigName,
			deploy.OpenStackConfigSecretName, waiting)
	}
	return condition.TrueVerdict("ConfigMap %s and Secret %s hold the cloud %q of user %s", deploy.OpenStackConfigName,
		deploy.OpenStackConfigSecretName, deploy.CloudName, api.Spec.AdminUser)
}
