package deploy

import (
	"encoding/json"
	"fmt"
	"maps"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	topologyv1 "github.com/openstack-k8s-operators/infra-operator/apis/topology/v1beta1"
	"github.com/openstack-k8s-operators/lib-common/modules/common/affinity"
	"github.com/openstack-k8s-operators/lib-common/modules/common/networkattachment"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Gather, decide, build, write (cert-manager's certificates policies are the model): the
// KeystoneAPI controller gathers, once per round, everything that shapes the objects it
// owns into a Gathered; each object is built whole by one method of it, here; the
// controller compares the result with what exists and writes it once. Whatever shapes
// the API Deployment is in this file and the functions it names.

// Gathered is what the objects a KeystoneAPI owns are built from: its spec, and what the
// controller resolved and read for this round.
type Gathered struct {
	API *keystonev1.KeystoneAPI
	// PodRevision identifies what the API pods read from Secrets (the configuration,
	// the certificates): a change rolls them.
	PodRevision string
	// DBSyncHash and BootstrapHash identify the inputs of the db-sync and bootstrap Jobs
	// (HashAnnotation).
	DBSyncHash, BootstrapHash string
	// Selector is the existing Deployment's, which cannot change (one keystone-operator
	// or an earlier version made selects other labels); nil when there is none.
	Selector *metav1.LabelSelector
	// Topology is the Topology spec.topologyRef names, nil for none.
	Topology *topologyv1.Topology
	// MemcachedMTLSSecret is the Memcached's client certificate Secret, "" for none.
	MemcachedMTLSSecret string
	// SCC is the SecurityContextConstraints the pods' Role grants (PodSCC): under anyuid,
	// which admits no seccomp profile, the pods set none.
	SCC string
	// APIFiles are the files of the configuration Secret the API pods read, by where
	// they read them (APIFiles).
	APIFiles map[string]string
	// CredentialKeys are the credential keys the keys Secret holds, each mounted as the
	// file Keystone reads it from; nil for a new repository's (0 and 1).
	CredentialKeys *KeyRepository
	// DrainSeconds is how long a stopping API pod keeps serving before httpd stops (the
	// operator's --api-drain-seconds); DrainSeconds when 0.
	DrainSeconds int64
}

// drain is DrainSeconds, the default when unset.
func (in Gathered) drain() int64 {
	if in.DrainSeconds > 0 {
		return in.DrainSeconds
	}
	return DrainSeconds
}

// TemplateAnnotation records on the Deployment and the CronJob a digest of the pod
// template the operator last applied. The template is compared with what the operator
// owns, not with what the API server holds (defaults added): a field removed from the
// spec, such as a nodeSelector key or a resource limit, is removed from the pods too.
const TemplateAnnotation = "keystone.openstack.org/template-hash"

// Deployment is the API Deployment: the pods (apiDeployment), the selector kept from
// the existing one (its pods carry its labels too), the Memcached's client certificate,
// their placement (the Topology's spreading, a constraint without a label selector
// selecting the KeystoneAPI's pods; without a Topology keystone-operator's default: two
// API pods on one node only when there is no other node), Multus's networks
// annotation, and TemplateAnnotation.
func (in Gathered) Deployment() (*appsv1.Deployment, error) {
	api := in.API
	dep := apiDeployment(api, in.PodRevision, in.APIFiles, in.drain())
	if in.Selector != nil {
		dep.Spec.Selector = in.Selector.DeepCopy()
		dep.Spec.Template.Labels = MergeLabels(dep.Spec.Template.Labels, in.Selector.MatchLabels)
	}
	in.finish(&dep.Spec.Template.Spec)
	if in.Topology == nil {
		dep.Spec.Template.Spec.Affinity = affinity.DistributePods(ServiceLabel, []string{"keystone"}, corev1.LabelHostname)
	} else {
		t := in.Topology.DeepCopy()
		if c := t.Spec.TopologySpreadConstraints; c != nil {
			for i := range *c {
				if (*c)[i].LabelSelector == nil {
					(*c)[i].LabelSelector = &metav1.LabelSelector{MatchLabels: Labels(api)}
				}
			}
		}
		t.ApplyTo(&dep.Spec.Template)
	}
	if len(api.Spec.NetworkAttachments) > 0 {
		networks, err := networkattachment.CreateNetworksAnnotation(api.Namespace, api.Spec.NetworkAttachments)
		if err != nil {
			return nil, err
		}
		dep.Spec.Template.Annotations = MergeLabels(dep.Spec.Template.Annotations, networks)
	}
	return dep, withTemplateDigest(&dep.ObjectMeta, &dep.Spec.Template)
}

// DBSyncDigest is what DBSyncHash is for the configuration of configRevision: db_sync
// runs again when the configuration or the image changes.
func DBSyncDigest(api *keystonev1.KeystoneAPI, configRevision string) string {
	return Hash(map[string]string{"config": configRevision, "image": api.Spec.ContainerImage})
}

// BootstrapDigest is what BootstrapHash is for the KeystoneAPI as it is: bootstrap runs
// again when the database, the image, the admin user or project, the region or the
// endpoints (status.apiEndpoints) change. The admin password is not in it (public).
func BootstrapDigest(api *keystonev1.KeystoneAPI) string {
	inputs := map[string]string{
		"database": api.Status.DatabaseHostname + "/" + api.Spec.DatabaseAccount, "image": api.Spec.ContainerImage,
		"user": api.Spec.AdminUser, "project": api.Spec.AdminProject, "region": api.Spec.Region,
	}
	for iface, url := range api.Status.APIEndpoints {
		inputs["endpoint-"+iface] = url
	}
	return Hash(inputs)
}

// DBSyncJob is the db-sync Job, for DBSyncHash.
func (in Gathered) DBSyncJob() *batchv1.Job {
	job := dbSyncJob(in.API, in.DBSyncHash)
	in.finish(&job.Spec.Template.Spec)
	return job
}

// BootstrapJob is the bootstrap Job, for BootstrapHash and the KeystoneAPI's endpoints
// (status.apiEndpoints).
func (in Gathered) BootstrapJob() *batchv1.Job {
	job := bootstrapJob(in.API, in.BootstrapHash, in.API.Status.APIEndpoints)
	in.finish(&job.Spec.Template.Spec)
	return job
}

// TrustFlushCronJob is the trust flush CronJob, with TemplateAnnotation.
func (in Gathered) TrustFlushCronJob() (*batchv1.CronJob, error) {
	cron := trustFlushCronJob(in.API)
	in.finish(&cron.Spec.JobTemplate.Spec.Template.Spec)
	return cron, withTemplateDigest(&cron.ObjectMeta, &cron.Spec.JobTemplate.Spec.Template)
}

// finish completes a pod spec of Keystone's with what was gathered: the Memcached's
// client certificate, the credential keys the Secret holds, and no seccomp profile where
// the pods' SecurityContextConstraints is anyuid (OpenShift refuses any profile under
// it, "seccomp may not be set", and the runtime's default applies).
func (in Gathered) finish(spec *corev1.PodSpec) {
	WithMemcachedMTLS(spec, in.MemcachedMTLSSecret)
	if in.SCC == AnyUIDSCC {
		spec.SecurityContext.SeccompProfile = nil
		for i := range spec.Containers {
			spec.Containers[i].SecurityContext.SeccompProfile = nil
		}
	}
	if in.CredentialKeys == nil {
		return
	}
	for i := range spec.Volumes {
		if spec.Volumes[i].Name == credentialVolume && spec.Volumes[i].Secret != nil {
			spec.Volumes[i].Secret.Items = in.CredentialKeys.items()
		}
	}
}

// Services are the public and internal Services (apiServices), selecting the pods the
// existing Deployment selects.
func (in Gathered) Services() ([]*corev1.Service, error) {
	services, err := apiServices(in.API)
	if err != nil {
		return nil, err
	}
	selector := SelectorLabels(in.API)
	if in.Selector != nil && len(in.Selector.MatchLabels) > 0 {
		selector = in.Selector.MatchLabels
	}
	for _, svc := range services {
		svc.Spec.Selector = maps.Clone(selector)
	}
	return services, nil
}

// withTemplateDigest records on obj (TemplateAnnotation) a digest of the pod template t
// as the operator builds it: public values only (the configuration enters as its revision).
func withTemplateDigest(obj *metav1.ObjectMeta, t *corev1.PodTemplateSpec) error {
	data, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("encoding the pod template: %w", err)
	}
	metav1.SetMetaDataAnnotation(obj, TemplateAnnotation, Hash(map[string]string{"template": string(data)}))
	return nil
}

// MergeLabels returns existing with add's keys set: labels (or annotations) the
// operator sets on an object that others may label too.
func MergeLabels(existing, add map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range existing {
		out[k] = v
	}
	for k, v := range add {
		out[k] = v
	}
	return out
}
