package deploy

import (
	"fmt"
	"strings"
	"testing"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	. "github.com/onsi/gomega"
	"github.com/openstack-k8s-operators/lib-common/modules/common/service"
	"github.com/openstack-k8s-operators/lib-common/modules/storage"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestDeployment(t *testing.T) {
	g := NewWithT(t)
	api := testAPI()
	api.Spec.Replicas = ptr.To[int32](3)
	api.Spec.NodeSelector = &map[string]string{"zone": "a"}
	dep, err := Gathered{API: api, PodRevision: "hash-1"}.Deployment()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(dep.Spec.Replicas).To(HaveValue(BeEquivalentTo(3)))
	g.Expect(dep.Spec.Template.Annotations).To(HaveKeyWithValue(HashAnnotation, "hash-1"))
	g.Expect(dep.Spec.Template.Spec.NodeSelector).To(HaveKeyWithValue("zone", "a"))
	c := dep.Spec.Template.Spec.Containers[0]
	g.Expect(c.Image).To(Equal("keystone:test"))
	g.Expect(c.ReadinessProbe.HTTPGet.Path).To(Equal("/v3"))
	// httpd started directly, after the key repositories are made: no kolla_start, no
	// sudo; the shell stays to turn SIGTERM into httpd's graceful stop.
	g.Expect(c.Command).To(Equal([]string{"/bin/bash", "-c", ServeCommand("/usr/sbin/httpd -DFOREGROUND", ClearDrainingMarker)}))
	g.Expect(c.Command[2]).To(ContainSubstring(LinkKeys + ClearDrainingMarker + " && { "))
	g.Expect(c.Env).To(BeEmpty(), "no KOLLA_CONFIG_STRATEGY: nothing copies the configuration")
	g.Expect(c.SecurityContext).To(Equal(RestrictedContainer()))
	g.Expect(*c.SecurityContext.RunAsUser).To(BeEquivalentTo(42425))
	g.Expect(c.VolumeMounts).NotTo(ContainElement(HaveField("MountPath", "/var/lib/kolla/config_files/config.json")))
	g.Expect(dep.Spec.Template.Spec.AutomountServiceAccountToken).To(HaveValue(BeFalse()), "no API token in Keystone's pods")

	var fernet *corev1.Volume
	for i, v := range dep.Spec.Template.Spec.Volumes {
		if v.Name == "fernet-keys" {
			fernet = &dep.Spec.Template.Spec.Volumes[i]
		}
	}
	g.Expect(fernet).NotTo(BeNil())
	g.Expect(fernet.Secret.SecretName).To(Equal("keystone"), "keystone-operator's keys Secret")
	g.Expect(fernet.Secret.Items).To(HaveLen(5))
	g.Expect(fernet.Secret.Items[4]).To(Equal(corev1.KeyToPath{Key: "FernetKeys4", Path: "4"}))

	// keystone-operator's selector, so that either operator can take over the other's
	// Deployment (a selector cannot change); the pods carry it.
	g.Expect(dep.Spec.Selector.MatchLabels).To(Equal(map[string]string{"service": "keystone", "owner": "keystone"}))
	for k, v := range dep.Spec.Selector.MatchLabels {
		g.Expect(dep.Spec.Template.Labels).To(HaveKeyWithValue(k, v))
	}
	// keystone-operator's spreading, without a Topology: preferably one API pod per node.
	anti := dep.Spec.Template.Spec.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution
	g.Expect(anti).To(HaveLen(1))
	g.Expect(anti[0].PodAffinityTerm.TopologyKey).To(Equal(corev1.LabelHostname))
	g.Expect(anti[0].PodAffinityTerm.LabelSelector.MatchExpressions[0].Key).To(Equal("service"))
	// No tighter than keystone-operator's probes (30 s period, 30 s timeout): a few busy
	// WSGI workers must not get the pod killed. Readiness is checked more often; failing
	// it restarts nothing.
	g.Expect(c.LivenessProbe.PeriodSeconds).To(BeNumerically(">=", 30))
	g.Expect(c.LivenessProbe.TimeoutSeconds).To(BeNumerically(">=", 30))
	g.Expect(c.ReadinessProbe.TimeoutSeconds).To(BeNumerically(">=", 30))
	// Ready at Keystone's first answer: the startup probe polls every second (for at most
	// StartupSeconds), and the steady-state probes have no initial delay left to wait for
	// once it has answered.
	g.Expect(c.StartupProbe.HTTPGet.Path).To(Equal("/v3"))
	g.Expect(c.StartupProbe.PeriodSeconds).To(BeEquivalentTo(1))
	g.Expect(c.StartupProbe.PeriodSeconds * c.StartupProbe.FailureThreshold).To(BeEquivalentTo(StartupSeconds))
	g.Expect(c.ReadinessProbe.InitialDelaySeconds).To(BeZero())
	g.Expect(c.LivenessProbe.InitialDelaySeconds).To(BeZero())

	other, err := Gathered{API: api, PodRevision: "hash-1"}.Deployment()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(other).To(Equal(dep), "a pure function of the spec and the pods' revision: keys are mounted, not hashed")
}

func TestJobs(t *testing.T) {
	g := NewWithT(t)
	api := testAPI()
	api.Spec.AdminUser = "o'brien"
	sync := dbSyncJob(api, "h1")
	g.Expect(sync.Name).To(Equal("keystone-db-sync"))
	g.Expect(sync.Annotations).To(HaveKeyWithValue(HashAnnotation, "h1"))
	g.Expect(*sync.Spec.BackoffLimit).To(Equal(JobBackoffLimit))
	g.Expect(sync.Spec.Template.Spec.RestartPolicy).To(Equal(corev1.RestartPolicyNever))
	files, err := RenderConfig(api, ConfigInput{DatabaseHostname: "db"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(files[ManageConf]).To(ContainSubstring(fmt.Sprintf("max_retries = %d\n", JobDBRetries)), "a job's database retries are bounded")
	g.Expect(sync.Spec.Template.Spec.Containers[0].VolumeMounts).To(ContainElement(corev1.VolumeMount{Name: "config-data",
		MountPath: "/etc/keystone/" + ManageConf, SubPath: ManageConf, ReadOnly: true}), "mounted where the jobs read it")
	g.Expect(sync.Spec.ActiveDeadlineSeconds).To(HaveValue(Equal(JobDeadlineSeconds)), "a job is bounded whatever hangs")
	g.Expect(sync.Spec.Template.Spec.Containers[0].Command[2]).To(HaveSuffix("exec keystone-manage " + ManageConfigArgs + " db_sync"))
	g.Expect(ManageConfigArgs).To(HaveSuffix("--config-file /etc/keystone/"+ManageConf), "the bound is read last, so it wins")

	boot := bootstrapJob(api, "h2", map[string]string{keystonev1.EndpointPublic: "https://k.example.com", keystonev1.EndpointInternal: "http://k-int:5000"})
	cmd := boot.Spec.Template.Spec.Containers[0].Command[2]
	g.Expect(cmd).To(ContainSubstring(`--bootstrap-username 'o'\''brien'`), "names are shell-quoted")
	g.Expect(cmd).To(ContainSubstring("--bootstrap-public-url 'https://k.example.com'"))
	g.Expect(cmd).To(ContainSubstring("--bootstrap-internal-url 'http://k-int:5000'"))
	g.Expect(strings.Contains(cmd, "secret")).To(BeFalse(), "the password is not on the command line")
	g.Expect(cmd).NotTo(ContainSubstring("--bootstrap-admin-url"), "no admin endpoint, as keystone-operator registers none")
	env := boot.Spec.Template.Spec.Containers[0].Env[0]
	g.Expect(env.Name).To(Equal(BootstrapPasswordEnv))
	g.Expect(env.ValueFrom.SecretKeyRef.Name).To(Equal("osp-secret"))
	g.Expect(env.ValueFrom.SecretKeyRef.Key).To(Equal("AdminPassword"))
}

func TestServicesAndEndpoints(t *testing.T) {
	g := NewWithT(t)
	api := testAPI()
	svcs, err := apiServices(api)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(svcs).To(HaveLen(2))
	g.Expect(svcs[0].Name).To(Equal("keystone-public"))
	g.Expect(svcs[1].Name).To(Equal("keystone-internal"))
	g.Expect(svcs[1].Spec.Ports[0].Port).To(BeEquivalentTo(5000))
	g.Expect(Endpoints(api)).To(Equal(map[string]string{
		"public": "http://keystone-public.openstack.svc:5000", "internal": "http://keystone-internal.openstack.svc:5000"}))
	api.Spec.Override.Service = &keystonev1.ServiceOverrides{Public: &keystonev1.EndpointOverride{EndpointURL: ptr.To("https://keystone.example.com")}}
	g.Expect(Endpoints(api)[keystonev1.EndpointPublic]).To(Equal("https://keystone.example.com"))
	g.Expect(Endpoints(api)[keystonev1.EndpointInternal]).To(Equal("http://keystone-internal.openstack.svc:5000"))
	api.Spec.TLS.API.Internal.SecretName = ptr.To("cert-keystone-internal-svc")
	g.Expect(Endpoints(api)[keystonev1.EndpointInternal]).To(Equal("https://keystone-internal.openstack.svc:5000"))
}

// TestServiceOverride applies override.service as openstack-operator writes it for
// compute nodes: a LoadBalancer with MetalLB annotations and labels.
func TestServiceOverride(t *testing.T) {
	g := NewWithT(t)
	api := testAPI()
	api.Spec.Override.Service = &keystonev1.ServiceOverrides{Internal: &keystonev1.EndpointOverride{OverrideSpec: service.OverrideSpec{
		EmbeddedLabelsAnnotations: &service.EmbeddedLabelsAnnotations{
			Labels:      map[string]string{"metallb": "internalapi"},
			Annotations: map[string]string{"metallb.universe.tf/address-pool": "internalapi", "metallb.universe.tf/loadBalancerIPs": "172.17.0.80"},
		},
		Spec: &service.OverrideServiceSpec{Type: corev1.ServiceTypeLoadBalancer},
	}}}
	svcs, err := apiServices(api)
	g.Expect(err).NotTo(HaveOccurred())
	public, internal := svcs[0], svcs[1]
	g.Expect(public.Spec.Type).To(Equal(corev1.ServiceTypeClusterIP))
	g.Expect(public.Annotations).To(HaveKeyWithValue(IngressCreateAnnotation, "true"))
	g.Expect(internal.Spec.Type).To(Equal(corev1.ServiceTypeLoadBalancer))
	g.Expect(internal.Labels).To(HaveKeyWithValue("metallb", "internalapi"))
	g.Expect(internal.Labels).To(HaveKeyWithValue(EndpointLabel, "internal"))
	g.Expect(internal.Annotations).To(HaveKeyWithValue("metallb.universe.tf/loadBalancerIPs", "172.17.0.80"))
	g.Expect(internal.Annotations).To(HaveKeyWithValue(IngressCreateAnnotation, "false"))
	g.Expect(internal.Annotations).To(HaveKeyWithValue("dnsmasq.network.openstack.org/hostname", "keystone-internal.openstack.svc"))
	g.Expect(internal.Spec.Ports[0].Port).To(BeEquivalentTo(5000))
}

// TestTLSVolumes mounts each interface's certificate and key in the API pods, and the
// CA bundle in the pods and the jobs; the probes speak HTTPS.
func TestTLSVolumes(t *testing.T) {
	g := NewWithT(t)
	api := tlsAPI()
	pod := apiDeployment(api, "rev", nil, DrainSeconds).Spec.Template.Spec
	mounts := map[string]string{}
	for _, m := range pod.Containers[0].VolumeMounts {
		mounts[m.MountPath] = m.Name + "/" + m.SubPath
	}
	g.Expect(mounts).To(HaveKeyWithValue("/var/lib/config-data/tls/certs/public.crt", "public-tls-certs/tls.crt"))
	g.Expect(mounts).To(HaveKeyWithValue("/var/lib/config-data/tls/private/internal.key", "internal-tls-certs/tls.key"))
	g.Expect(mounts).To(HaveKeyWithValue(CABundlePath, "combined-ca-bundle/tls-ca-bundle.pem"))
	g.Expect(pod.Containers[0].ReadinessProbe.HTTPGet.Scheme).To(Equal(corev1.URISchemeHTTPS))
	secrets := map[string]string{}
	for _, v := range pod.Volumes {
		if v.Secret != nil {
			secrets[v.Name] = v.Secret.SecretName
		}
	}
	g.Expect(secrets).To(HaveKeyWithValue("public-tls-certs", "cert-keystone-public-svc"))
	g.Expect(secrets).To(HaveKeyWithValue("combined-ca-bundle", "combined-ca-bundle"))
	job := dbSyncJob(api, "h").Spec.Template.Spec
	g.Expect(job.Volumes).To(ContainElement(HaveField("Name", "combined-ca-bundle")))
	g.Expect(job.Volumes).NotTo(ContainElement(HaveField("Name", "public-tls-certs")), "the jobs serve nothing")
}

// TestTrustFlushCronJob runs keystone-manage trust_flush on the schedule, with the
// spec's arguments quoted.
func TestTrustFlushCronJob(t *testing.T) {
	g := NewWithT(t)
	api := testAPI()
	api.Spec.TrustFlushArgs = "--date 2025-01-01T00:00:00 --project-id abc"
	api.Spec.TrustFlushSuspend = true
	cron := trustFlushCronJob(api)
	g.Expect(cron.Name).To(Equal("keystone-cron"))
	g.Expect(cron.Spec.Schedule).To(Equal("1 * * * *"))
	g.Expect(*cron.Spec.Suspend).To(BeTrue())
	g.Expect(cron.Spec.ConcurrencyPolicy).To(Equal(batchv1.ForbidConcurrent))
	cmd := cron.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Command[2]
	g.Expect(cmd).To(HaveSuffix("trust_flush '--date' '2025-01-01T00:00:00' '--project-id' 'abc'"))
	g.Expect(cmd).To(ContainSubstring("--config-file /etc/keystone/keystone-manage.conf"))
}

// TestCredentialFilesPrivate checks that every file that may hold a credential (the
// configuration, the keys, the certificates) is mounted read-only, readable by the
// keystone user and group only, in every pod, and that no pod mounts an API token.
func TestCredentialFilesPrivate(t *testing.T) {
	g := NewWithT(t)
	api := testAPI()
	api.Spec.TLS.API.Public.SecretName = ptr.To("cert-public")
	for name, spec := range keystonePods(api) {
		g.Expect(spec.AutomountServiceAccountToken).To(HaveValue(BeFalse()), name)
		g.Expect(spec.SecurityContext.FSGroup).To(HaveValue(Equal(KeystoneUID)), name)
		for _, v := range spec.Volumes {
			if v.Secret != nil {
				g.Expect(v.Secret.DefaultMode).To(HaveValue(BeEquivalentTo(0o440)), "%s: volume %s", name, v.Name)
			}
		}
		for _, m := range spec.Containers[0].VolumeMounts {
			if m.Name != keyRepositoryVolume && m.Name != httpdRunVolume && m.Name != tmpVolume {
				g.Expect(m.ReadOnly).To(BeTrue(), "%s: %s", name, m.MountPath)
			}
		}
	}
}

// tlsAPI is testAPI with a certificate for each interface and a CA bundle.
func tlsAPI() *keystonev1.KeystoneAPI {
	api := testAPI()
	api.Spec.TLS.API.Public.SecretName = ptr.To("cert-keystone-public-svc")
	api.Spec.TLS.API.Internal.SecretName = ptr.To("cert-keystone-internal-svc")
	api.Spec.TLS.CaBundleSecretName = "combined-ca-bundle"
	return api
}

// keystonePods are the pod specs of every workload of api, by name.
func keystonePods(api *keystonev1.KeystoneAPI) map[string]corev1.PodSpec {
	files := APIFiles(api, ConfigInput{})
	return map[string]corev1.PodSpec{
		"deployment":  apiDeployment(api, "h", files, DrainSeconds).Spec.Template.Spec,
		"db-sync":     dbSyncJob(api, "h").Spec.Template.Spec,
		"bootstrap":   bootstrapJob(api, "h", map[string]string{}).Spec.Template.Spec,
		"trust-flush": trustFlushCronJob(api).Spec.JobTemplate.Spec.Template.Spec,
	}
}

// TestExtraMounts mounts an LDAP domain configuration as keystone-operator propagates
// it: into the API pods when the propagation is unset, "All" or "Keystone", never into
// the jobs.
func TestExtraMounts(t *testing.T) {
	g := NewWithT(t)
	api := testAPI()
	volume := func(name string, propagation ...storage.PropagationType) storage.VolMounts {
		return storage.VolMounts{Propagation: propagation,
			Volumes: []storage.Volume{{Name: name, VolumeSource: storage.VolumeSource{
				Secret: &corev1.SecretVolumeSource{SecretName: name}}}},
			Mounts: []corev1.VolumeMount{{Name: name, MountPath: "/etc/keystone/domains/" + name, ReadOnly: true}}}
	}
	api.Spec.ExtraMounts = []keystonev1.KeystoneExtraMounts{{Name: "ldap", VolMounts: []storage.VolMounts{
		volume("unset"), volume("all", storage.PropagationEverywhere), volume("keystone", "Keystone"), volume("nova", "Nova"),
	}}}
	pod := apiDeployment(api, "rev", nil, DrainSeconds).Spec.Template.Spec
	names := func(vols []corev1.Volume) []string {
		var out []string
		for _, v := range vols {
			out = append(out, v.Name)
		}
		return out
	}
	g.Expect(names(pod.Volumes)).To(ContainElements("unset", "all", "keystone"))
	g.Expect(names(pod.Volumes)).NotTo(ContainElement("nova"))
	g.Expect(pod.Containers[0].VolumeMounts).To(ContainElement(HaveField("MountPath", "/etc/keystone/domains/keystone")))
	g.Expect(names(dbSyncJob(api, "h").Spec.Template.Spec.Volumes)).NotTo(ContainElement("unset"))
}

// TestJobPodsAreNotAPIPods keeps the jobs' pods out of what the Services and the
// Deployment select: a running db-sync, bootstrap or trust flush pod gets no traffic.
func TestJobPodsAreNotAPIPods(t *testing.T) {
	g := NewWithT(t)
	api := testAPI()
	selector := apiDeployment(api, "rev", nil, DrainSeconds).Spec.Selector.MatchLabels
	svcs, err := apiServices(api)
	g.Expect(err).NotTo(HaveOccurred())
	for _, labels := range []map[string]string{
		dbSyncJob(api, "h").Spec.Template.Labels, bootstrapJob(api, "h", Endpoints(api)).Spec.Template.Labels,
		trustFlushCronJob(api).Spec.JobTemplate.Spec.Template.Labels,
	} {
		g.Expect(labels).To(HaveKeyWithValue("keystone.openstack.org/keystoneapi", "keystone"))
		g.Expect(matches(selector, labels)).To(BeFalse(), "the Deployment's selector matches %v", labels)
		for _, svc := range svcs {
			g.Expect(matches(svc.Spec.Selector, labels)).To(BeFalse(), "service %s selects %v", svc.Name, labels)
		}
	}
}

func matches(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// TestPodsRunAsTheirServiceAccount: every pod a KeystoneAPI makes runs as
// keystone-<name>, whose Role may use nonroot-v2 and nothing else, not as the namespace's
// default ServiceAccount (restricted-v2 on OpenShift refuses the image's fixed UID).
func TestPodsRunAsTheirServiceAccount(t *testing.T) {
	g := NewWithT(t)
	api := testAPI()
	specs := keystonePods(api)
	for name, spec := range specs {
		g.Expect(spec.ServiceAccountName).To(Equal("keystone-"+api.Name), name)
	}
	// The operator may use nonroot-v2 (config/rbac): the Role grants it. May it use anyuid
	// alone (openstack-operator's role for keystone-operator): anyuid, which admits the
	// same pods. Neither: nonroot-v2, which the API server then refuses with its reason.
	g.Expect(PodSCC(func(string) bool { return true })).To(Equal("nonroot-v2"))
	g.Expect(PodSCC(func(scc string) bool { return scc == "anyuid" })).To(Equal("anyuid"))
	g.Expect(PodSCC(func(string) bool { return false })).To(Equal("nonroot-v2"))
	role, binding := Role(api, PodSCC(func(string) bool { return true })), RoleBinding(api)
	g.Expect(role.Name).To(Equal("keystone-" + api.Name + "-role"))
	g.Expect(role.Rules).To(HaveLen(1))
	g.Expect(role.Rules[0].APIGroups).To(ConsistOf("security.openshift.io"))
	g.Expect(role.Rules[0].Resources).To(ConsistOf("securitycontextconstraints"))
	g.Expect(role.Rules[0].ResourceNames).To(ConsistOf("nonroot-v2"))
	g.Expect(role.Rules[0].Verbs).To(ConsistOf("use"))
	g.Expect(binding.RoleRef.Name).To(Equal(role.Name))
	g.Expect(binding.Subjects).To(HaveLen(1))
	g.Expect(binding.Subjects[0].Name).To(Equal(ServiceAccount(api).Name))
	g.Expect(binding.Subjects[0].Namespace).To(Equal(api.Namespace))
}

// TestPodsStartTheirProcessDirectly: every pod starts its process itself (keystone-manage,
// httpd), as the keystone user, without escalation, capabilities or a writable root file
// system, each file it reads mounted where it reads it; only httpd's run directory and
// the key repositories are writable.
func TestPodsStartTheirProcessDirectly(t *testing.T) {
	g := NewWithT(t)
	api := testAPI()
	api.Spec.DefaultConfigOverwrite = map[string]string{"policy.yaml": "{}"}
	for name, spec := range keystonePods(api) {
		c := spec.Containers[0]
		g.Expect(c.Command[:2]).To(Equal([]string{"/bin/bash", "-c"}), name)
		// keystone-manage in the shell's place; httpd the shell's child (ServeCommand).
		if name == "deployment" {
			g.Expect(c.Command[2]).To(ContainSubstring("TERM INT QUIT WINCH; "+LinkKeys), name)
			g.Expect(c.Command[2]).To(ContainSubstring("/usr/sbin/httpd -DFOREGROUND & pid=$!"), name)
		} else {
			g.Expect(c.Command[2]).To(HavePrefix(LinkKeys), name)
			g.Expect(c.Command[2]).To(MatchRegexp(`&& exec [^&]*$`), name)
		}
		g.Expect(c.Command[2]).NotTo(ContainSubstring("kolla"), name)
		g.Expect(c.Command[2]).NotTo(ContainSubstring("sudo"), name)
		g.Expect(c.SecurityContext).To(Equal(RestrictedContainer()), name)
		g.Expect(*c.SecurityContext.RunAsUser).To(BeEquivalentTo(42425), name)
		g.Expect(*c.SecurityContext.AllowPrivilegeEscalation).To(BeFalse(), name)
		g.Expect(*c.SecurityContext.ReadOnlyRootFilesystem).To(BeTrue(), name)
		g.Expect(c.SecurityContext.Capabilities.Drop).To(ConsistOf(corev1.Capability("ALL")), name)
		g.Expect(spec.SecurityContext).To(Equal(RestrictedPod()), name)
		mounts, writable := map[string]string{}, []string{}
		for _, m := range c.VolumeMounts {
			mounts[m.MountPath] = m.SubPath
			if !m.ReadOnly {
				writable = append(writable, m.MountPath)
			}
		}
		g.Expect(mounts).To(HaveKeyWithValue("/etc/keystone/keystone.conf", "keystone.conf"), name)
		g.Expect(mounts).To(HaveKeyWithValue("/etc/keystone/keystone.conf.d/custom.conf", "custom.conf"), name)
		g.Expect(mounts).To(HaveKeyWithValue("/etc/my.cnf", "my.cnf"), name)
		g.Expect(mounts).To(HaveKey(FernetKeysMount), name)
		g.Expect(mounts).NotTo(HaveKey("/var/lib/kolla/config_files/config.json"), name)
		if name == "deployment" {
			g.Expect(mounts).To(HaveKeyWithValue("/etc/httpd/conf/httpd.conf", "httpd.conf"))
			g.Expect(mounts).To(HaveKeyWithValue("/etc/keystone/policy.yaml", "policy.yaml"))
			g.Expect(writable).To(ConsistOf(KeyRepositoriesDir, HttpdRunDir, TmpDir))
		} else {
			g.Expect(c.Command[2]).To(ContainSubstring("exec keystone-manage "+ManageConfigArgs), name)
			g.Expect(mounts).To(HaveKeyWithValue("/etc/keystone/keystone-manage.conf", "keystone-manage.conf"), name)
			g.Expect(writable).To(ConsistOf(KeyRepositoriesDir), name)
		}
	}
}
