package deploy

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/openstack-k8s-operators/lib-common/modules/common/service"
	"github.com/openstack-k8s-operators/lib-common/modules/storage"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// The container contract is the image openstack-operator deploys (openstack-k8s-operators'
// TCIB keystone image), without its kolla entrypoint: no `kolla_start`, no `sudo
// kolla_set_configs` copying a staging directory into place as root. Every container
// starts its process directly as the image's keystone user (httpd in the foreground for
// the API, keystone-manage for the jobs), with no capability, no privilege escalation
// and a read-only root file system:
//   - each configuration file is mounted read-only (subPath) where Keystone, httpd or
//     PyMySQL reads it (apiFiles, jobConfigFiles);
//   - the only writable places are EmptyDirs: httpd's run directory (its PID file,
//     mod_wsgi's sockets) and the key repositories (KeyRepositoriesDir);
//   - the fernet and credential keys are mounted from their Secret, not copied, so a
//     rotation reaches running pods. A Secret volume's directories are world-readable
//     (the kubelet makes them so), which Keystone warns of at every load of the keys,
//     every token: the repositories Keystone reads are directories of mode 0700 of the
//     keystone user, made at start, holding one link per mounted key (LinkKeys).
const (
	// KeystoneUID is the keystone user of the image, and its group (TCIB's
	// uid_gid_manage.sh: keystone 42425 42425).
	KeystoneUID int64 = 42425
	// JobBackoffLimit is how many failed attempts a db-sync or bootstrap Job makes
	// before the operator reports it failed.
	JobBackoffLimit int32 = 3
	// JobDeadlineSeconds bounds a db-sync or bootstrap Job, its attempts together,
	// whatever hangs (each attempt's database retries are bounded by ManageConf).
	JobDeadlineSeconds int64 = 20 * 60
	// BootstrapPasswordEnv is read by `keystone-manage bootstrap`.
	BootstrapPasswordEnv = "OS_BOOTSTRAP_PASSWORD"
	// StartupSeconds bounds how long Keystone may take to answer its first /v3 after the
	// API container starts (httpd, then mod_wsgi loading Keystone, the first connection to
	// the database): the startup probe's attempts, one a second while nothing listens
	// (an attempt that times out takes StartupProbeTimeout); then the pod restarts.
	StartupSeconds int32 = 300
	// StartupProbeTimeout is how long one attempt of the startup probe waits for an answer.
	StartupProbeTimeout int32 = 10
	// HttpdCommand is the API container's process: the image's httpd, in the foreground.
	HttpdCommand = "/usr/sbin/httpd -DFOREGROUND"
	// DrainSeconds is how long, by default, a stopping API pod goes on serving before
	// httpd stops (the operator's --api-drain-seconds): the pod leaves its Services'
	// endpoints as soon as it is told to stop, and every node's kube-proxy (its iptables
	// rules resynced at most a second apart by default), every router and every client's
	// kept-alive connection take that long to stop sending it requests. Requests in
	// flight at the end of it have httpd's graceful stop.
	DrainSeconds int64 = 5
	// ServeAloneSeconds bounds how long, after the drain, a stopping API pod goes on
	// serving while new connections still reach it. They do when it is its Services' last
	// endpoint: kube-proxy sends a stopping pod's endpoints new connections while no other
	// is ready (an eviction or a drain of the only replica), until its replacement is
	// ready. A pod among others gets none after the drain and stops QuietSeconds later;
	// so does the last endpoint when its clients open less than a connection in
	// QuietSeconds, and Keystone then has none until the replacement is ready.
	ServeAloneSeconds int64 = 120
	// QuietSeconds is how long a stopping API pod waits, after the drain, for a new
	// connection before its preStop hook ends (and the kubelet's SIGTERM stops httpd).
	QuietSeconds = 2
	// StopMarginSeconds is the grace an API pod has beyond DrainSeconds and httpd's
	// graceful stop (GracefulShutdownTimeout, the request timeout): mod_wsgi gives its
	// daemon processes 3 s when httpd stops, and the kubelet's own bookkeeping.
	StopMarginSeconds int64 = 5
	// HttpdRunDir is httpd's run directory (PidFile, DefaultRuntimeDir, WSGISocketPrefix):
	// an EmptyDir, where the image's is root's.
	HttpdRunDir = "/run/httpd"
	// DrainingMarker is the file the preStop hook makes as the pod starts to stop:
	// while it exists, httpd closes every connection after its answer (httpd.conf's
	// nokeepalive), so that kept-alive clients reconnect through the Service, to another
	// pod, before httpd stops and closes their idle connections under them.
	DrainingMarker = HttpdRunDir + "/draining"
	// ClearDrainingMarker is the API container's first step: a restart in the same pod
	// finds the last stop's marker in the EmptyDir.
	ClearDrainingMarker = "rm -f " + DrainingMarker
	// KeyRepositoriesDir holds the key repositories Keystone reads (FernetKeyRepository,
	// CredentialKeyRepository): an EmptyDir.
	KeyRepositoriesDir = "/run/keystone"
	// FernetKeysMount and CredentialKeysMount are where the keys Secret is mounted.
	FernetKeysMount     = "/var/lib/config-data/fernet-keys"
	CredentialKeysMount = "/var/lib/config-data/credential-keys"

	// TmpDir is the API container's temporary directory (an EmptyDir): Keystone signs SAML
	// assertions through a temporary file, mod_auth_openidc keeps its cache files there.
	TmpDir = "/tmp"

	configVolume        = "config-data"
	tmpVolume           = "tmp"
	federationVolume    = "federation-metadata"
	fernetVolume        = "fernet-keys"
	credentialVolume    = "credential-keys"
	httpdRunVolume      = "httpd-run"
	keyRepositoryVolume = "key-repositories"
)

// LinkKeys is the shell prelude of every container: it makes the key repositories
// Keystone reads, directories only the keystone user may read, with a link to each
// mounted key (a link resolves at each read, so a rotated key is read at once). It
// starts afresh when the container restarts in the same pod.
var LinkKeys = "umask 077 && " + linkKeys(FernetKeysMount, FernetKeyRepository) + linkKeys(CredentialKeysMount, CredentialKeyRepository)

func linkKeys(mount, repository string) string {
	return fmt.Sprintf("rm -rf %[2]s && mkdir %[2]s && ln -s %[1]s/* %[2]s/ && ", mount, repository)
}

// StartCommand is the shell command of a container running cmd (keystone-manage): the
// key repositories made (LinkKeys), then each of the container's own steps (shell
// commands), then cmd in the shell's place.
func StartCommand(cmd string, steps ...string) string {
	return prelude(steps) + "exec " + cmd
}

// ServeCommand is the API container's shell command: as StartCommand, but the shell
// stays the container's process 1 and runs cmd (httpd) as its child. It turns the
// kubelet's stop signal (SIGTERM, or any other an image may name: INT, QUIT, WINCH) into
// SIGWINCH, httpd's graceful stop (no new connection, the requests in flight finished,
// within GracefulShutdownTimeout), and exits with httpd's status once httpd has ended.
// Were httpd process 1, the preStop hook would have to stop it, and its end, which ends
// every process of the container, would kill the hook: a failed hook for the kubelet (a
// Warning FailedPreStopHook) at every stop. The trap is set first (process 1 ignores a
// signal it has no handler for): a stop signal during the steps ends the shell with
// success before httpd starts, and one between httpd's start and the shell's next
// command stops httpd with SIGTERM, which needs no handler of httpd's (nothing is served
// yet). The kubelet sends it after the preStop hook, which takes the drain and the
// quiet time, so neither comes in practice.
func ServeCommand(cmd string, steps ...string) string {
	return "pid= stop=; trap 'stop=1; [[ -z $pid ]] || kill -WINCH $pid' TERM INT QUIT WINCH; " + prelude(steps) +
		"{ [[ -z $stop ]] || exit 0; " + cmd + " & pid=$!; [[ -z $stop ]] || kill -TERM $pid; " +
		"while wait $pid; rc=$?; kill -0 $pid 2>/dev/null; do :; done; exit $rc; }"
}

// prelude is what a container does before its process: LinkKeys, then each step.
func prelude(steps []string) string {
	out := LinkKeys
	for _, step := range steps {
		out += step + " && "
	}
	return out
}

// jobConfigFiles are the files of the configuration Secret a job's keystone-manage
// reads (ManageConfigArgs, my.cnf), by where it reads them.
var jobConfigFiles = map[string]string{
	"/etc/keystone/" + KeystoneConf:               KeystoneConf,
	"/etc/keystone/keystone.conf.d/" + CustomConf: CustomConf,
	KeyRepositoriesConfPath:                       KeyRepositoriesConf,
	"/etc/keystone/" + ManageConf:                 ManageConf,
	MyCnfPath:                                     MyCnf,
}

// dbSyncJob runs `keystone-manage db_sync` for the configuration of hash.
func dbSyncJob(api *keystonev1.KeystoneAPI, hash string) *batchv1.Job {
	return job(api, DBSyncJobName(api), hash, "keystone-manage "+ManageConfigArgs+" db_sync", nil)
}

// bootstrapJob runs `keystone-manage bootstrap`: admin user, project and role, the
// region, and Keystone's public and internal endpoints (no admin endpoint, as
// keystone-operator registers none). The password comes from the Secret.
func bootstrapJob(api *keystonev1.KeystoneAPI, hash string, endpoints map[string]string) *batchv1.Job {
	cmd := fmt.Sprintf("keystone-manage "+ManageConfigArgs+" bootstrap --bootstrap-username %s --bootstrap-project-name %s "+
		"--bootstrap-role-name admin --bootstrap-service-name keystone --bootstrap-region-id %s "+
		"--bootstrap-internal-url %s --bootstrap-public-url %s",
		shellQuote(api.Spec.AdminUser), shellQuote(api.Spec.AdminProject), shellQuote(api.Spec.Region),
		shellQuote(endpoints[keystonev1.EndpointInternal]), shellQuote(endpoints[keystonev1.EndpointPublic]))
	env := []corev1.EnvVar{{Name: BootstrapPasswordEnv, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: api.Spec.Secret}, Key: api.Spec.PasswordSelectors.Admin,
	}}}}
	return job(api, BootstrapJobName(api), hash, cmd, env)
}

// TrustFlushCronJobName is the CronJob running keystone-manage trust_flush.
func TrustFlushCronJobName(api *keystonev1.KeystoneAPI) string { return api.Name + "-cron" }

// trustFlushCronJob runs `keystone-manage trust_flush` on trustFlushSchedule, one run
// at a time, to purge expired and soft-deleted trusts.
func trustFlushCronJob(api *keystonev1.KeystoneAPI) *batchv1.CronJob {
	cmd := "keystone-manage " + ManageConfigArgs + " trust_flush"
	for _, arg := range strings.Fields(api.Spec.TrustFlushArgs) {
		cmd += " " + shellQuote(arg)
	}
	j := job(api, TrustFlushCronJobName(api), "", cmd, nil)
	// A run that fails is retried by the next one, not by the Job.
	j.Spec.BackoffLimit = ptr.To[int32](0)
	return &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: TrustFlushCronJobName(api), Namespace: api.Namespace, Labels: Labels(api)},
		Spec: batchv1.CronJobSpec{
			Schedule:                   TrustFlushSchedule(api),
			Suspend:                    ptr.To(api.Spec.TrustFlushSuspend),
			ConcurrencyPolicy:          batchv1.ForbidConcurrent,
			SuccessfulJobsHistoryLimit: ptr.To[int32](1),
			FailedJobsHistoryLimit:     ptr.To[int32](1),
			JobTemplate:                batchv1.JobTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: Labels(api)}, Spec: j.Spec},
		},
	}
}

// TrustFlushSchedule is the spec's schedule, or keystone-operator's default.
func TrustFlushSchedule(api *keystonev1.KeystoneAPI) string {
	if api.Spec.TrustFlushSchedule == "" {
		return "1 * * * *"
	}
	return api.Spec.TrustFlushSchedule
}

// JobLabel names, on a job's pods, the job they run for.
const JobLabel = "keystone.openstack.org/job"

// JobPodLabels mark the pods of a db-sync, bootstrap or trust flush job: the
// KeystoneAPI's name, not the labels the Services and the Deployment select on, so a
// job's pod never receives API traffic and is never counted as an API pod.
func JobPodLabels(api *keystonev1.KeystoneAPI, job string) map[string]string {
	return map[string]string{APILabel: api.Name, JobLabel: job}
}

func job(api *keystonev1.KeystoneAPI, name, hash, cmd string, env []corev1.EnvVar) *batchv1.Job {
	pod := podSpec(api, corev1.Container{
		Name:    name,
		Command: []string{"/bin/bash", "-c", StartCommand(cmd)},
		Env:     env,
	}, jobPod, jobConfigFiles)
	pod.RestartPolicy = corev1.RestartPolicyNever
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: api.Namespace, Labels: Labels(api),
			Annotations: map[string]string{HashAnnotation: hash}},
		Spec: batchv1.JobSpec{
			BackoffLimit:          ptr.To(JobBackoffLimit),
			ActiveDeadlineSeconds: ptr.To(JobDeadlineSeconds),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: JobPodLabels(api, name)},
				Spec:       pod,
			},
		},
	}
}

// Labels and annotations of the exposed Services, as keystone-operator sets them:
// openstack-operator and the ingress tooling select on them.
const (
	// OwnerLabel names the owning KeystoneAPI (lib-common's owner selector).
	OwnerLabel = "owner"
	// ServiceLabel names the service a pod runs (lib-common's app selector).
	ServiceLabel = "service"
	// EndpointLabel is the interface a Service exposes, as label and annotation.
	EndpointLabel = "endpoint"
	// IngressCreateAnnotation asks openstack-operator for a route to a public ClusterIP Service.
	IngressCreateAnnotation = "core.openstack.org/ingress_create"
)

// apiServices returns the public and internal Services, each with its override applied
// (lib-common's merge, as keystone-operator applies it): override labels and
// annotations under the operator's own, the override spec merged into the generated.
func apiServices(api *keystonev1.KeystoneAPI) ([]*corev1.Service, error) {
	var out []*corev1.Service
	for _, iface := range Interfaces {
		labels := Labels(api)
		labels[EndpointLabel] = iface
		labels[OwnerLabel] = api.Name
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: ServiceName(api, iface), Namespace: api.Namespace, Labels: labels,
				Annotations: map[string]string{EndpointLabel: iface}},
			Spec: corev1.ServiceSpec{
				Type:     corev1.ServiceTypeClusterIP,
				Selector: SelectorLabels(api),
				Ports: []corev1.ServicePort{{Name: "keystone-" + iface, Port: Port, Protocol: corev1.ProtocolTCP,
					TargetPort: intstr.FromInt32(Port)}},
			},
		}
		if o := api.ServiceOverride(iface); o != nil {
			merged, err := service.NewService(svc, 0, &o.OverrideSpec)
			if err != nil {
				return nil, fmt.Errorf("override.service.%s: %w", iface, err)
			}
			svc.Labels, svc.Annotations, svc.Spec = merged.GetLabels(), merged.GetAnnotations(), *merged.GetSpec()
		}
		// A route only for a public ClusterIP Service; a LoadBalancer's name goes to dnsmasq.
		svc.Annotations[IngressCreateAnnotation] = strconv.FormatBool(iface == keystonev1.EndpointPublic &&
			svc.Spec.Type == corev1.ServiceTypeClusterIP)
		if svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
			svc.Annotations[service.AnnotationHostnameKey] = fmt.Sprintf("%s.%s.svc", svc.Name, svc.Namespace)
		}
		out = append(out, svc)
	}
	return out, nil
}

// Replicas is how many API pods the KeystoneAPI asks for (one unless spec.replicas says).
func Replicas(api *keystonev1.KeystoneAPI) *int32 {
	return ptr.To(ptr.Deref(api.Spec.Replicas, 1))
}

// apiDeployment returns the API Deployment, without placement (Gathered.Deployment
// adds the default spreading or the Topology's); podRevision in the pod template rolls
// the pods when what they read from Secrets changes; files are the configuration files
// httpd and Keystone read (APIFiles).
func apiDeployment(api *keystonev1.KeystoneAPI, podRevision string, files map[string]string, drain int64) *appsv1.Deployment {
	// The probes reach the first virtual host, the public interface's (httpd serves one
	// scheme per port: both interfaces have certificates, or neither).
	probeScheme := corev1.URISchemeHTTP
	if TLSEnabled(api, keystonev1.EndpointPublic) {
		probeScheme = corev1.URISchemeHTTPS
	}
	// keystone-operator's steady-state probes: a few WSGI workers busy with slow requests
	// (a token validation against a loaded database) must not get the pod killed.
	// Readiness is checked more often, so a new pod serves sooner; failing it restarts
	// nothing. Neither runs before the startup probe has had its first answer: it polls
	// every second, so a pod is started at Keystone's first answer, and the kubelet then
	// runs the readiness probe at once (no initial delay left to wait for).
	// A restart in the same pod (a failed liveness probe runs the preStop hook too)
	// finds the last stop's marker in the EmptyDir: httpd starts without it.
	steps := []string{ClearDrainingMarker}
	if federated(files) {
		// mod_auth_openidc writes where it reads the realms' metadata: a copy, made afresh
		// at each start (a restart in the same pod finds the last one), writable by httpd.
		steps = append(steps, fmt.Sprintf("rm -rf %[2]s/* && install -m 0600 %[1]s/* %[2]s/", FederationFilesDir, FederationMetadataDir))
	}
	get := corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/v3", Port: intstr.FromInt32(Port), Scheme: probeScheme}}
	probe := func(period int32) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: get, PeriodSeconds: period, TimeoutSeconds: 30,
			// The API server's defaults, set here so that a comparison with the stored
			// object (integers are compared strictly) finds nothing to change.
			SuccessThreshold: 1, FailureThreshold: 3,
		}
	}
	// An answer slower than a second still counts (a TLS handshake on a busy node): each
	// attempt may take StartupProbeTimeout, the next starts a second after it ends.
	startup := &corev1.Probe{ProbeHandler: get, PeriodSeconds: 1, TimeoutSeconds: StartupProbeTimeout, SuccessThreshold: 1,
		FailureThreshold: StartupSeconds}
	pod := podSpec(api, corev1.Container{
		Name:           "keystone-api",
		Command:        []string{"/bin/bash", "-c", ServeCommand(HttpdCommand, steps...)},
		Ports:          []corev1.ContainerPort{{Name: "keystone", ContainerPort: Port, Protocol: corev1.ProtocolTCP}},
		StartupProbe:   startup,
		ReadinessProbe: probe(10),
		LivenessProbe:  probe(30),
		Resources:      api.Spec.Resources,
		Lifecycle:      &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: HttpdDrain(drain)}}},
	}, apiPod, files)
	pod.TerminationGracePeriodSeconds = ptr.To(StopGraceSeconds(api, drain))
	// Never fewer serving pods than asked during a rollout: a new pod serves before an
	// old one stops (and with one replica, there are two for a moment).
	maxUnavailable, maxSurge := intstr.FromInt32(0), intstr.FromInt32(1)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: api.Name, Namespace: api.Namespace, Labels: Labels(api)},
		Spec: appsv1.DeploymentSpec{
			Replicas: Replicas(api),
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: &maxUnavailable, MaxSurge: &maxSurge}},
			Selector: &metav1.LabelSelector{MatchLabels: SelectorLabels(api)},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: Labels(api), Annotations: map[string]string{HashAnnotation: podRevision}},
				Spec:       pod,
			},
		},
	}
}

// HttpdDrain is the API container's preStop hook: it makes DrainingMarker (every answer
// from then on closes its connection), keeps serving for drain seconds,
// while the pod leaves its Services' endpoints everywhere; then, for at most
// ServeAloneSeconds, as long as new connections still come (QuietSeconds without one
// ends it: the pod is no longer anyone's endpoint, or was the last one and its
// replacement is ready); then it ends, and the kubelet's SIGTERM reaches the container's
// shell, which stops httpd gracefully (ServeCommand). It reads the pod's connections from
// /proc/net, with bash alone, as the pod's own user: the hook needs no privilege.
func HttpdDrain(drain int64) []string {
	return []string{"/bin/bash", "-c", drainScript(drain, ServeAloneSeconds, Port, DrainingMarker)}
}

// drainScript is HttpdDrain's script: marker made, drain seconds, then at most alone
// more (by the clock: reading /proc/net takes longer as it fills) while new connections
// to port arrive. The quiet time is
// counted in scans a second apart that found no new connection, not with $SECONDS,
// which counts wall-clock second boundaries and would cut it to just over one. fresh
// counts, in new, the connections it has not seen before (it runs in the script's shell,
// not a subshell, so that what it saw is kept).
func drainScript(drain, alone int64, port int32, marker string) string {
	// /proc/net/tcp{,6}: "sl local_address rem_address st ...", the ports in hexadecimal;
	// st 0A is LISTEN. Every other state counts: a request on a connection of its own
	// is over in milliseconds, but httpd closes it first ("Connection: close"), and the
	// pod's end stays in TIME_WAIT for a minute; a kept-alive one stays ESTABLISHED.
	return fmt.Sprintf(`: > %s
sleep %d
declare -A seen
fresh() {
  local sl local remote st rest
  new=0
  while read -r sl local remote st rest; do
    if [[ $local == *:%04X && $st != 0A && -z ${seen[$remote]} ]]; then seen[$remote]=1; new=$((new+1)); fi
  done < <(cat /proc/net/tcp /proc/net/tcp6 2>/dev/null)
}
fresh
end=$((SECONDS + %d)) quiet=0
while ((SECONDS < end && quiet < %d)); do
  sleep 1
  fresh
  if ((new > 0)); then quiet=0; else quiet=$((quiet+1)); fi
done`, marker, drain, port, alone, QuietSeconds)
}

// StopGraceSeconds is the API pods' termination grace period: the drain (drain
// seconds), at most ServeAloneSeconds serving as the last endpoint, httpd's graceful
// stop, which waits for requests at most the request timeout (spec.apiTimeout,
// GracefulShutdownTimeout), and StopMarginSeconds.
func StopGraceSeconds(api *keystonev1.KeystoneAPI, drain int64) int64 {
	return drain + ServeAloneSeconds + int64(RequestTimeout(api)) + StopMarginSeconds
}

// RequestTimeout is httpd's request timeout (spec.apiTimeout, 60 s when unset): its
// TimeOut, and how long its graceful stop waits for requests in flight.
func RequestTimeout(api *keystonev1.KeystoneAPI) int {
	if api.Spec.APITimeout == 0 {
		return 60
	}
	return api.Spec.APITimeout
}

// podKind tells podSpec which process a container runs.
type podKind int

const (
	// apiPod: httpd, with its configuration and the certificates of the interfaces.
	apiPod podKind = iota
	// jobPod: keystone-manage.
	jobPod
)

// podSpec completes container c with the image, the files it reads, the keys and the
// restricted security context (RestrictedContainer), and wraps it in a pod spec.
// files maps where a file of the configuration Secret is read to its key.
func podSpec(api *keystonev1.KeystoneAPI, c corev1.Container, kind podKind, files map[string]string) corev1.PodSpec {
	c.Image = api.Spec.ContainerImage
	// A failed db-sync or bootstrap explains itself: the end of its log becomes the
	// termination message that the condition quotes.
	c.TerminationMessagePolicy = corev1.TerminationMessageFallbackToLogsOnError
	c.SecurityContext = RestrictedContainer()
	c.VolumeMounts = []corev1.VolumeMount{
		{Name: fernetVolume, MountPath: FernetKeysMount, ReadOnly: true},
		{Name: credentialVolume, MountPath: CredentialKeysMount, ReadOnly: true},
		{Name: keyRepositoryVolume, MountPath: KeyRepositoriesDir},
	}
	volumes := []corev1.Volume{
		secretVolume(configVolume, ConfigSecretName(api), nil),
		secretVolume(fernetVolume, KeysSecretName(api), keyItems(FernetKeyPrefix, int(fernetMaxActiveKeys(api)))),
		secretVolume(credentialVolume, KeysSecretName(api), keyItems(CredentialKeyPrefix, NewCredentialKeys)),
		emptyDir(keyRepositoryVolume),
	}
	if kind == apiPod {
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: httpdRunVolume, MountPath: HttpdRunDir},
			corev1.VolumeMount{Name: tmpVolume, MountPath: TmpDir},
			// Every file of the configuration Secret where keystone-operator's pods have
			// them too: a customServiceConfig may name one there (a policy file of
			// defaultConfigOverwrite: [oslo_policy] policy_file).
			corev1.VolumeMount{Name: configVolume, MountPath: ConfigDataDir, ReadOnly: true})
		volumes = append(volumes, emptyDir(httpdRunVolume), emptyDir(tmpVolume))
		if federated(files) {
			c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: federationVolume, MountPath: FederationMetadataDir})
			volumes = append(volumes, emptyDir(federationVolume))
		}
	}
	for _, path := range slices.Sorted(maps.Keys(files)) {
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: configVolume, MountPath: path,
			SubPath: files[path], ReadOnly: true})
	}
	spec := corev1.PodSpec{
		SecurityContext: RestrictedPod(),
		// Its own ServiceAccount, which may use nonroot-v2 on OpenShift (serviceaccount.go).
		ServiceAccountName: ServiceAccountName(api),
		// Keystone never talks to the Kubernetes API: no token to steal from its pods.
		AutomountServiceAccountToken: ptr.To(false),
		Containers:                   []corev1.Container{c},
		Volumes:                      volumes,
	}
	vols, mounts := tlsVolumes(api, kind == apiPod)
	if kind == apiPod {
		// The API pods also get the extraMounts, as keystone-operator propagates them.
		extraVols, extraMounts := ExtraVolumes(api)
		vols, mounts = append(vols, extraVols...), append(mounts, extraMounts...)
	}
	spec.Volumes = append(spec.Volumes, vols...)
	spec.Containers[0].VolumeMounts = append(spec.Containers[0].VolumeMounts, mounts...)
	if api.Spec.NodeSelector != nil {
		spec.NodeSelector = *api.Spec.NodeSelector
	}
	return spec
}

// RestrictedPod is the security context of every Keystone pod: the keystone user and
// group, never root, the runtime's default seccomp profile, and the keystone group on
// the mounted files (fsGroup), so that the keystone user reads them at mode 0440.
// Pod Security's restricted profile admits it, and so does OpenShift's nonroot-v2.
func RestrictedPod() *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{
		RunAsUser:      ptr.To(KeystoneUID),
		RunAsGroup:     ptr.To(KeystoneUID),
		RunAsNonRoot:   ptr.To(true),
		FSGroup:        ptr.To(KeystoneUID),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// RestrictedContainer is the security context of every Keystone container: the pod's
// user, no capability, no privilege escalation, a read-only root file system.
func RestrictedContainer() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		RunAsUser:                ptr.To(KeystoneUID),
		RunAsGroup:               ptr.To(KeystoneUID),
		RunAsNonRoot:             ptr.To(true),
		AllowPrivilegeEscalation: ptr.To(false),
		ReadOnlyRootFilesystem:   ptr.To(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// federated tells whether the files the API container reads include federated realms'
// metadata.
func federated(files map[string]string) bool {
	for path := range files {
		if strings.HasPrefix(path, FederationFilesDir+"/") {
			return true
		}
	}
	return false
}

func emptyDir(name string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
}

// ExtraVolumes are the volumes and mounts of extraMounts that propagate to Keystone's
// API pods: propagation unset, "All" or "Keystone".
func ExtraVolumes(api *keystonev1.KeystoneAPI) ([]corev1.Volume, []corev1.VolumeMount) {
	var vols []corev1.Volume
	var mounts []corev1.VolumeMount
	for i := range api.Spec.ExtraMounts {
		for _, vm := range api.Spec.ExtraMounts[i].Propagate([]storage.PropagationType{keystonev1.KeystonePropagation}) {
			for _, v := range vm.Volumes {
				// A JSON round trip between two sets of the same fields: it cannot fail.
				if core, err := v.ToCoreVolume(); err == nil {
					vols = append(vols, *core)
				}
			}
			mounts = append(mounts, vm.Mounts...)
		}
	}
	return vols, mounts
}

func secretVolume(name, secret string, items []corev1.KeyToPath) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: secret, Items: items, DefaultMode: ptr.To[int32](0o440),
	}}}
}

// keyItems maps Secret keys <prefix>0..n-1 to the files 0..n-1 of a key repository.
func keyItems(prefix string, n int) []corev1.KeyToPath {
	items := make([]corev1.KeyToPath, n)
	for i := range items {
		items[i] = corev1.KeyToPath{Key: prefix + strconv.Itoa(i), Path: strconv.Itoa(i)}
	}
	return items
}

// items maps each key of the repository to the file Keystone reads it from, named
// after its index (CredentialKeys2 to 2, CredentialKeys04 to 4).
func (r *KeyRepository) items() []corev1.KeyToPath {
	items := make([]corev1.KeyToPath, len(r.Indices))
	for n, i := range r.Indices {
		items[n] = corev1.KeyToPath{Key: r.Names[n], Path: strconv.Itoa(i)}
	}
	return items
}

// shellQuote quotes s for bash.
func shellQuote(s string) string {
	out := "'"
	for _, r := range s {
		if r == '\'' {
			out += `'\''`
		} else {
			out += string(r)
		}
	}
	return out + "'"
}
