package keystoneapi

import (
	"fmt"
	"slices"
	"strings"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	memcachedv1 "github.com/openstack-k8s-operators/infra-operator/apis/memcached/v1beta1"
	rabbitmqv1 "github.com/openstack-k8s-operators/infra-operator/apis/rabbitmq/v1beta1"
	topologyv1 "github.com/openstack-k8s-operators/infra-operator/apis/topology/v1beta1"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	"github.com/openstack-k8s-operators/lib-common/modules/common/networkattachment"
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

// memcachedVerdict is MemcachedReady from the Memcached named name (nil when it does
// not exist: DependencyNotFound): its Ready mirrored, then True once it lists servers.
func memcachedVerdict(name string, mc *memcachedv1.Memcached) condition.Verdict {
	if mc == nil {
		return condition.FalseVerdict(condition.DependencyNotFound, "Memcached %s not found", name)
	}
	if v := condition.MirrorVerdict("Memcached", mc.Name, mc.Status.Conditions); !v.True {
		return v
	}
	if len(mc.Status.ServerList) == 0 {
		return condition.FalseVerdict(condition.Requested, "Memcached %s is ready but lists no servers yet", mc.Name)
	}
	return condition.TrueVerdict("Memcached %s ready with %d servers", mc.Name, len(mc.Status.ServerList))
}

// transportURLVerdict is RabbitMqTransportURLReady from the TransportURL of the
// notifications to cluster and secretProblem (what is wrong with the Secret it names, ""
// for nothing): its Ready mirrored, then its Secret waited for (Requested), then
// DependencyNotFound while the Secret lacks the URL.
func transportURLVerdict(tu *rabbitmqv1.TransportURL, cluster, secretProblem string) condition.Verdict {
	switch v := condition.MirrorVerdict("TransportURL", tu.Name, tu.Status.Conditions); {
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
	if v := condition.MirrorVerdict("MariaDBDatabase", db.Name, db.Status.Conditions); !v.True {
		return v
	}
	if v := condition.MirrorVerdict("MariaDBAccount", account.Name, account.Status.Conditions); !v.True {
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

// severityRank orders a registration's Ready severity: Error, then Warning, then the rest.
func severityRank(c *lc.Condition) int {
	switch {
	case c == nil:
		return 0
	case c.Severity == lc.SeverityError:
		return 2
	case c.Severity == lc.SeverityWarning:
		return 1
	}
	return 0
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
