package v1beta1

import (
	"fmt"

	"github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	libservice "github.com/openstack-k8s-operators/lib-common/modules/common/service"
	"github.com/openstack-k8s-operators/lib-common/modules/common/tls"
	"github.com/openstack-k8s-operators/lib-common/modules/storage"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Endpoint interfaces of the Keystone catalog.
const (
	EndpointPublic   = "public"
	EndpointInternal = "internal"
	EndpointAdmin    = "admin"
)

// KeystoneAPISpec describes a Keystone deployment. Field names follow the
// openstack-k8s-operators keystone-operator so that its manifests apply unchanged.
//
// +kubebuilder:validation:XValidation:rule="!self.externalKeystoneAPI || (has(self.override.service) && has(self.override.service.public) && has(self.override.service.public.endpointURL) && has(self.override.service.internal) && has(self.override.service.internal.endpointURL))",message="externalKeystoneAPI needs both override.service.public.endpointURL and override.service.internal.endpointURL: they say where the existing Keystone is"
type KeystoneAPISpec struct {
	// ContainerImage is the Keystone image run by the deployment and its jobs. Left
	// empty, the operator sets it to its default (ContainerImageEnv, else
	// KeystoneAPIContainerImage), as keystone-operator's defaulting webhook does.
	// +kubebuilder:validation:Optional
	ContainerImage string `json:"containerImage"`

	// Replicas of the Keystone API deployment.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=32
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// Secret names the Secret that holds the admin password.
	// +kubebuilder:validation:MinLength=1
	Secret string `json:"secret"`

	// PasswordSelectors names the keys of Secret that hold passwords.
	// +kubebuilder:default={admin: AdminPassword}
	// +optional
	PasswordSelectors PasswordSelector `json:"passwordSelectors,omitempty"`

	// DatabaseInstance names the MariaDB (Galera) instance that hosts Keystone's database.
	// Required unless externalKeystoneAPI is set (InputReady says so: keystone-operator's
	// schema accepts it empty).
	// +optional
	DatabaseInstance string `json:"databaseInstance,omitempty"`

	// DatabaseAccount names the MariaDBAccount Keystone connects with.
	// +kubebuilder:default=keystone
	// +optional
	DatabaseAccount string `json:"databaseAccount,omitempty"`

	// MemcachedInstance names the Memcached that caches tokens.
	// +kubebuilder:default=memcached
	// +optional
	MemcachedInstance string `json:"memcachedInstance,omitempty"`

	// Region of the endpoints Keystone registers for itself.
	// +kubebuilder:default=regionOne
	// +kubebuilder:validation:MinLength=1
	// +optional
	Region string `json:"region,omitempty"`

	// AdminProject is the project of the admin user created by the bootstrap.
	// +kubebuilder:default=admin
	// +kubebuilder:validation:MinLength=1
	// +optional
	AdminProject string `json:"adminProject,omitempty"`

	// AdminUser is the name of the admin user created by the bootstrap.
	// +kubebuilder:default=admin
	// +kubebuilder:validation:MinLength=1
	// +optional
	AdminUser string `json:"adminUser,omitempty"`

	// CustomServiceConfig is appended to keystone.conf (ini format); it wins over the
	// rendered defaults. A Go template of keystone-operator's parameters (such as
	// {{ .KeystoneEndpointPublic }}) is expanded, as keystone-operator expands it; text
	// that is no such template is used as written (docs/keystoneapi.md).
	// +optional
	CustomServiceConfig string `json:"customServiceConfig,omitempty"`

	// DefaultConfigOverwrite replaces whole rendered files, by file name
	// (for example keystone.conf or policy.yaml), each expanded as customServiceConfig
	// is; InputReady reports a key that is no file name.
	// +optional
	DefaultConfigOverwrite map[string]string `json:"defaultConfigOverwrite,omitempty"`

	// FernetRotationDays is how often the fernet keys rotate.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +optional
	FernetRotationDays *int32 `json:"fernetRotationDays,omitempty"`

	// FernetMaxActiveKeys is the number of fernet keys kept, staged and primary included.
	// +kubebuilder:default=5
	// +kubebuilder:validation:Minimum=3
	// +optional
	FernetMaxActiveKeys *int32 `json:"fernetMaxActiveKeys,omitempty"`

	// Override sets, per interface, the labels, annotations and spec of the Service the
	// operator creates (type LoadBalancer, for example), and the endpoint URL
	// registered for Keystone instead of the Service's.
	// +optional
	Override APIOverrideSpec `json:"override,omitempty"`

	// ExternalKeystoneAPI uses an existing Keystone at the override URLs instead of
	// deploying one: only the input and the endpoint are checked, nothing is created.
	// +kubebuilder:default=false
	// +optional
	ExternalKeystoneAPI bool `json:"externalKeystoneAPI"`

	// Resources of the Keystone API containers.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`

	// NodeSelector places the Keystone pods.
	// +optional
	NodeSelector *map[string]string `json:"nodeSelector,omitempty"`

	// PreserveJobs keeps finished db-sync and bootstrap jobs instead of deleting them.
	// +kubebuilder:default=false
	// +optional
	PreserveJobs bool `json:"preserveJobs"`

	// TLS serves each interface over HTTPS with the certificate of its Secret (keys
	// tls.crt and tls.key), and trusts the CA bundle of caBundleSecretName (key
	// tls-ca-bundle.pem) in Keystone's pods and in this operator's Keystone clients.
	// +optional
	TLS tls.API `json:"tls,omitempty"`

	// APITimeout is httpd's request timeout, in seconds.
	// +kubebuilder:default=60
	// +kubebuilder:validation:Minimum=10
	// +optional
	APITimeout int `json:"apiTimeout,omitempty"`

	// HttpdCustomization tunes the httpd that serves Keystone.
	// +kubebuilder:default={processNumber: 3}
	// +optional
	HttpdCustomization HttpdCustomization `json:"httpdCustomization"`

	// EnableSecureRBAC enforces Keystone's new default policies and their scopes
	// (oslo.policy enforce_new_defaults and enforce_scope).
	// +kubebuilder:default=true
	// +optional
	EnableSecureRBAC bool `json:"enableSecureRBAC"`

	// TrustFlushSchedule is the cron schedule of keystone-manage trust_flush, which
	// purges expired and soft-deleted trusts; empty means the default (clients built
	// on keystone-operator's types send it empty).
	// +kubebuilder:default="1 * * * *"
	// +optional
	TrustFlushSchedule string `json:"trustFlushSchedule,omitempty"`

	// TrustFlushArgs are added to keystone-manage trust_flush (for example
	// --date 2025-01-01T00:00:00).
	// +kubebuilder:default=""
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9 =._/:-]*$`
	// +optional
	TrustFlushArgs string `json:"trustFlushArgs,omitempty"`

	// NotificationsBus sends Keystone's notifications (identity.user.created, ...) to a
	// RabbitMQ cluster, through a TransportURL of infra-operator. Unset (and
	// rabbitMqClusterName unset), they go to the cluster "rabbitmq" with its default
	// user and vhost, as keystone-operator sends them.
	// +optional
	NotificationsBus *NotificationsBus `json:"notificationsBus,omitempty"`

	// RabbitMqClusterName is the cluster of notifications when notificationsBus is not
	// set ("rabbitmq" when empty). Deprecated: use notificationsBus.cluster.
	// +optional
	RabbitMqClusterName string `json:"rabbitMqClusterName,omitempty"`

	// ExtraMounts adds volumes to Keystone's API pods (LDAP domain configurations,
	// federation metadata, ...): each volume whose propagation is unset, "All" or
	// "Keystone", as keystone-operator propagates them.
	// +kubebuilder:default={}
	// +optional
	ExtraMounts []KeystoneExtraMounts `json:"extraMounts,omitempty"`

	// FederatedRealmConfig names a Secret whose key federation-config.json maps file
	// names to the metadata of federated realms (JSON); each becomes a file of httpd's
	// /var/lib/httpd/metadata, as keystone-operator installs them. Only needed when
	// several realms are federated.
	// +optional
	FederatedRealmConfig string `json:"federatedRealmConfig,omitempty"`

	// TopologyRef names an infra-operator Topology of this namespace whose spread
	// constraints and affinity the Keystone pods get (a constraint without a label
	// selector selects Keystone's pods).
	// +optional
	TopologyRef *TopoRef `json:"topologyRef,omitempty"`

	// NetworkAttachments names NetworkAttachmentDefinitions (Multus) of this namespace
	// that Keystone's pods are attached to, besides the cluster network.
	// +optional
	NetworkAttachments []string `json:"networkAttachments,omitempty"`

	// TrustFlushSuspend suspends the trust flush CronJob.
	// +kubebuilder:default=false
	// +optional
	TrustFlushSuspend bool `json:"trustFlushSuspend"`

	// RegistrationPolicy says what the namespace's KeystoneServices, KeystoneEndpoints
	// and KeystoneApplicationCredentials may obtain in Keystone: roles, role creation,
	// services, users, endpoints under adopted services (docs/security.md). An extension
	// of this suite; where it is absent, what keystone-operator lets every namespace do:
	// each field's default, and endpoints under every adopted service but an identity
	// service.
	// +optional
	RegistrationPolicy *RegistrationPolicy `json:"registrationPolicy,omitempty"`
}

// TopoRef names a Topology (infra-operator's TopoRef, the same fields and schema).
type TopoRef struct {
	// Name of the Topology.
	// +optional
	Name string `json:"name"`
	// Namespace of the Topology: the KeystoneAPI's, which is also the default.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// KeystoneExtraMounts are volumes and their mounts, with lib-common's propagation.
type KeystoneExtraMounts struct {
	// Name of this group of volumes.
	// +optional
	Name string `json:"name,omitempty"`
	// Region of this group of volumes.
	// +optional
	Region string `json:"region,omitempty"`
	// VolMounts are the volumes, their mounts and where they propagate.
	VolMounts []storage.VolMounts `json:"extraVol"`
}

// KeystonePropagation is the propagation of extraMounts to Keystone's API pods.
const KeystonePropagation storage.PropagationType = "Keystone"

const (
	// KeystoneAPIContainerImage is the image a KeystoneAPI without containerImage gets
	// when the operator's environment names none (keystone-operator's fall-back,
	// api/v1beta1/keystoneapi_types.go).
	KeystoneAPIContainerImage = "quay.io/podified-antelope-centos9/openstack-keystone:current-podified"
	// ContainerImageEnv is the environment variable that names the operator's default
	// Keystone image, as it does keystone-operator's (SetupDefaults).
	ContainerImageEnv = "RELATED_IMAGE_KEYSTONE_API_IMAGE_URL_DEFAULT"
)

// Propagate returns the volumes and mounts of m that reach the pods of svc.
func (m *KeystoneExtraMounts) Propagate(svc []storage.PropagationType) []storage.VolMounts {
	var out []storage.VolMounts
	for _, v := range m.VolMounts {
		out = append(out, v.Propagate(svc)...)
	}
	return out
}

// NotificationsBus is infra-operator's RabbitMqConfig (the same fields and schema,
// without the dependency): where notifications go.
type NotificationsBus struct {
	// User is the RabbitMQ user; empty for the cluster's default.
	// +optional
	User string `json:"user,omitempty"`
	// Vhost is the RabbitMQ virtual host; empty for "/".
	// +optional
	Vhost string `json:"vhost,omitempty"`
	// Cluster is the RabbitMQ cluster.
	// +kubebuilder:validation:MinLength=1
	Cluster string `json:"cluster"`
}

// HttpdCustomization tunes the httpd that serves Keystone.
type HttpdCustomization struct {
	// ProcessNumber is the number of WSGI processes of each interface.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +optional
	ProcessNumber *int32 `json:"processNumber"`

	// CustomConfigSecret names a Secret whose keys are httpd configuration snippets,
	// rendered as Go templates with keystone-operator's parameters and functions
	// (docs/keystoneapi.md) and included at the end of each interface's virtual host
	// (as /etc/httpd/conf/httpd_custom_<interface>_<key>).
	// +optional
	CustomConfigSecret *string `json:"customConfigSecret,omitempty"`
}

// PasswordSelector names the keys of the Secret that hold passwords.
type PasswordSelector struct {
	// Admin is the key of the admin password.
	// +kubebuilder:default=AdminPassword
	// +kubebuilder:validation:MinLength=1
	// +optional
	Admin string `json:"admin,omitempty"`
}

// APIOverrideSpec overrides what the operator would otherwise derive.
type APIOverrideSpec struct {
	// Service overrides the endpoints of the public and internal Services.
	// +optional
	Service *ServiceOverrides `json:"service,omitempty"`
}

// ServiceOverrides overrides each exposed interface.
type ServiceOverrides struct {
	// Public overrides the public endpoint.
	// +optional
	Public *EndpointOverride `json:"public,omitempty"`
	// Internal overrides the internal endpoint.
	// +optional
	Internal *EndpointOverride `json:"internal,omitempty"`
}

// EndpointOverride overrides one interface: the labels, annotations and spec of its
// Service (lib-common's override, as keystone-operator's), and the URL registered.
type EndpointOverride struct {
	libservice.OverrideSpec `json:",inline"`

	// EndpointURL is the URL Keystone is reached at on this interface, for example
	// https://keystone.example.com. Not validated at admission, as keystone-operator's
	// schema does not: openstack-operator writes "http://" for a moment, before its
	// Route has a host. InputReady waits for a host, and reports what is no URL.
	// +optional
	EndpointURL *string `json:"endpointURL,omitempty"`
}

// KeystoneAPIStatus is what the operator observed of a KeystoneAPI.
type KeystoneAPIStatus struct {
	// ReadyCount is the number of Keystone pods ready to serve.
	// +optional
	ReadyCount int32 `json:"readyCount,omitempty"`

	// Hash records input hashes, by name (for example the rendered configuration and
	// the db-sync and bootstrap jobs that ran for it).
	// +optional
	Hash map[string]string `json:"hash,omitempty"`

	// APIEndpoints are Keystone's URLs by interface (public, internal).
	// +optional
	APIEndpoints map[string]string `json:"apiEndpoints,omitempty"`

	// VerifiedAdmin is spec.adminUser as Keystone knows it, recorded once the operator's
	// login as it worked (external mode): the registrations of other namespaces at that
	// Keystone never use that user, whatever their policies let them name, while this
	// KeystoneAPI exists. This suite's field: on keystone-operator's CRD it is pruned,
	// and only the name of a Ready KeystoneAPI's admin is refused.
	// +optional
	VerifiedAdmin *VerifiedAdmin `json:"verifiedAdmin,omitempty"`

	// DatabaseHostname is the host Keystone's database is reached at.
	// +optional
	DatabaseHostname string `json:"databaseHostname,omitempty"`

	// Region is the region of Keystone's endpoints, and of the endpoints KeystoneEndpoints
	// register; GetRegion reads it.
	// +optional
	Region string `json:"region,omitempty"`

	// LastAppliedTopology is the Topology the pods were last given.
	// +optional
	LastAppliedTopology *TopoRef `json:"lastAppliedTopology,omitempty"`

	// NetworkAttachments lists, per attachment (namespace/name), the IP addresses of
	// Keystone's pods on it, as Multus reports them.
	// +optional
	NetworkAttachments map[string][]string `json:"networkAttachments,omitempty"`

	// TransportURLSecret names the Secret of the notifications' transport URL.
	// +optional
	TransportURLSecret string `json:"transportURLSecret,omitempty"`

	// Registrations counts the KeystoneServices, KeystoneEndpoints and
	// KeystoneApplicationCredentials of the namespace, and how many of each are Ready; the
	// condition RegistrationsReady says which one is not.
	// +optional
	Registrations *KeystoneAPIRegistrations `json:"registrations,omitempty"`

	// RelatedObjects are the objects this KeystoneAPI created or holds (configuration and
	// key Secrets, Jobs, Services, Deployment, CronJob, MariaDB objects, Memcached,
	// TransportURL, openstack-config) that exist, in a fixed order (apiVersion, kind,
	// namespace, name and uid; no resourceVersion, which would make every change of them a
	// write here): what an audit, or an admin on call, looks at first.
	// +optional
	RelatedObjects []corev1.ObjectReference `json:"relatedObjects,omitempty"`

	// Conditions: Ready first, then each step in order.
	// +optional
	Conditions condition.Conditions `json:"conditions,omitempty"`

	// ObservedGeneration is the generation the conditions describe.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// KeystoneAPIRegistrations counts the registrations of a KeystoneAPI's namespace.
type KeystoneAPIRegistrations struct {
	KeystoneServices               RegistrationCount `json:"keystoneServices"`
	KeystoneEndpoints              RegistrationCount `json:"keystoneEndpoints"`
	KeystoneApplicationCredentials RegistrationCount `json:"keystoneApplicationCredentials"`
}

// RegistrationCount is how many objects of one registration kind exist, and how many of
// them are Ready.
type RegistrationCount struct {
	Total int32 `json:"total"`
	Ready int32 `json:"ready"`
}

// KeystoneAPI deploys OpenStack Keystone, or points at an existing one.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=openstack
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type KeystoneAPI struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   KeystoneAPISpec   `json:"spec,omitempty"`
	Status KeystoneAPIStatus `json:"status,omitempty"`
}

// VerifiedAdmin is a KeystoneAPI's admin user as a login at Endpoint showed it.
type VerifiedAdmin struct {
	// ID is the user's ID in the Keystone at Endpoint.
	ID string `json:"id"`
	// Endpoint is the URL the login was made at (status.apiEndpoints.internal then).
	Endpoint string `json:"endpoint"`
}

// KeystoneAPIList is a list of KeystoneAPI.
//
// +kubebuilder:object:root=true
type KeystoneAPIList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KeystoneAPI `json:"items"`
}

func init() {
	SchemeBuilder.Register(&KeystoneAPI{}, &KeystoneAPIList{})
}

// IsReady tells whether the KeystoneAPI is Ready for its current generation.
func (k *KeystoneAPI) IsReady() bool {
	return k.Status.ObservedGeneration == k.Generation && k.Status.Conditions.IsTrue(condition.ReadyCondition)
}

// GetRegion returns the region the KeystoneAPI registers endpoints in, as written to
// its status (keystone-operator's helper of the same name reads the same field).
func (k *KeystoneAPI) GetRegion() string { return k.Status.Region }

// GetEndpoint returns Keystone's URL for an interface (public or internal).
func (k *KeystoneAPI) GetEndpoint(iface string) (string, error) {
	if url, ok := k.Status.APIEndpoints[iface]; ok {
		return url, nil
	}
	return "", fmt.Errorf("KeystoneAPI %s has no %s endpoint yet", k.Name, iface)
}

// ServiceOverride returns the override of an interface (public or internal); nil when none is set.
func (k *KeystoneAPI) ServiceOverride(iface string) *EndpointOverride {
	s := k.Spec.Override.Service
	if s == nil {
		return nil
	}
	switch iface {
	case EndpointPublic:
		return s.Public
	case EndpointInternal:
		return s.Internal
	}
	return nil
}

// EndpointOverrideURL returns the override URL of an interface, or "" when none is set.
func (k *KeystoneAPI) EndpointOverrideURL(iface string) string {
	o := k.ServiceOverride(iface)
	if o == nil || o.EndpointURL == nil {
		return ""
	}
	return *o.EndpointURL
}

// DefaultNotificationsCluster is the RabbitMQ cluster of notifications when the spec
// names none, as keystone-operator defaults it.
const DefaultNotificationsCluster = "rabbitmq"

// NotificationsCluster is the RabbitMQ cluster Keystone sends notifications to:
// notificationsBus.cluster, else rabbitMqClusterName, else DefaultNotificationsCluster.
// Like keystone-operator, a deployed Keystone always sends notifications.
func (k *KeystoneAPI) NotificationsCluster() string {
	if k.Spec.NotificationsBus != nil {
		return k.Spec.NotificationsBus.Cluster
	}
	if k.Spec.RabbitMqClusterName != "" {
		return k.Spec.RabbitMqClusterName
	}
	return DefaultNotificationsCluster
}
