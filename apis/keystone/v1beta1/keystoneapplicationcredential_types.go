package v1beta1

import (
	"github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KeystoneApplicationCredentialSpec describes an application credential a service
// uses instead of its password: created as that service's user, on the service
// project, with the roles and access rules given here, and rotated before it expires.
//
// +kubebuilder:validation:XValidation:rule="self.gracePeriodDays < self.expirationDays",message="gracePeriodDays must be smaller than expirationDays: the credential is rotated gracePeriodDays before it expires"
type KeystoneApplicationCredentialSpec struct {
	// Secret holds the service user's password.
	// +kubebuilder:validation:MinLength=1
	Secret string `json:"secret"`

	// PasswordSelector is the key of Secret that holds the password.
	// +kubebuilder:validation:MinLength=1
	PasswordSelector string `json:"passwordSelector"`

	// UserName is the Keystone user (in the default domain) the credential belongs to.
	// +kubebuilder:validation:MinLength=1
	UserName string `json:"userName"`

	// ExpirationDays is the lifetime of each credential, in days.
	// +kubebuilder:default=365
	// +kubebuilder:validation:Minimum=2
	// +optional
	ExpirationDays int `json:"expirationDays,omitempty"`

	// GracePeriodDays is how many days before it expires a credential is replaced.
	// +kubebuilder:default=182
	// +kubebuilder:validation:Minimum=1
	// +optional
	GracePeriodDays int `json:"gracePeriodDays,omitempty"`

	// Roles of the credential, a subset of the user's roles on the service project.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:items:MinLength=1
	Roles []string `json:"roles"`

	// Unrestricted lets the credential create other application credentials and trusts.
	// +kubebuilder:default=false
	// +optional
	Unrestricted bool `json:"unrestricted,omitempty"`

	// AccessRules limit the credential to these API calls; none: every call its roles allow.
	// +optional
	AccessRules []ACRule `json:"accessRules,omitempty"`
}

// ACRule allows one kind of API call.
type ACRule struct {
	// Service is the service type of the catalog, for example compute.
	// +kubebuilder:validation:MinLength=1
	Service string `json:"service"`

	// Path is the API path, for example /v2.1/servers.
	// +kubebuilder:validation:MinLength=1
	Path string `json:"path"`

	// Method is the HTTP method.
	// +kubebuilder:validation:Enum=GET;HEAD;POST;PUT;PATCH;DELETE
	Method string `json:"method"`
}

// KeystoneApplicationCredentialStatus is what the operator observed of a
// KeystoneApplicationCredential.
type KeystoneApplicationCredentialStatus struct {
	// ACID is the ID of the current credential in Keystone.
	// +optional
	ACID string `json:"acID,omitempty"`

	// SecretName names the Secret of the current credential (keys AC_ID and AC_SECRET).
	// +optional
	SecretName string `json:"secretName,omitempty"`

	// PreviousSecretName names the Secret of the credential before the last rotation,
	// kept while a consumer holds a finalizer on it.
	// +optional
	PreviousSecretName string `json:"previousSecretName,omitempty"`

	// PreviousACID is the ID of that credential, as this operator recorded it when it
	// replaced it: what its Secret (which anyone who may write Secrets in the namespace
	// can forge) is checked against before the credential is revoked. An addition of this
	// suite, pruned on keystone-operator's schema.
	// +optional
	PreviousACID string `json:"previousACID,omitempty"`

	// RelatedObjects are the objects this KeystoneApplicationCredential holds (its current
	// and previous Secrets) that exist, in a fixed order (apiVersion, kind, namespace, name
	// and uid; no resourceVersion, which would make every change of them a write here): what
	// an audit, or an admin on call, looks at first.
	// +optional
	RelatedObjects []corev1.ObjectReference `json:"relatedObjects,omitempty"`

	// Conditions: Ready first, then each step in order.
	// +optional
	Conditions condition.Conditions `json:"conditions,omitempty"`

	// CreatedAt is when the current credential was created.
	// +optional
	CreatedAt *metav1.Time `json:"createdAt,omitempty"`

	// ExpiresAt is when the current credential expires.
	// +optional
	ExpiresAt *metav1.Time `json:"expiresAt,omitempty"`

	// RotationEligibleAt is when the current credential is replaced: ExpiresAt minus
	// gracePeriodDays.
	// +optional
	RotationEligibleAt *metav1.Time `json:"rotationEligibleAt,omitempty"`

	// LastRotated is when a credential last replaced another.
	// +optional
	LastRotated *metav1.Time `json:"lastRotated,omitempty"`

	// ObservedGeneration is the generation the conditions describe.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// SecurityHash is a digest of the roles, access rules and unrestricted flag the
	// current credential was made with (public values): a change rotates at once.
	// +optional
	SecurityHash string `json:"securityHash,omitempty"`
}

// KeystoneApplicationCredential keeps a service's application credential in Keystone
// and its Secret.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=appcred,categories=openstack
// +kubebuilder:printcolumn:name="ACID",type=string,JSONPath=`.status.acID`
// +kubebuilder:printcolumn:name="SecretName",type=string,JSONPath=`.status.secretName`
// +kubebuilder:printcolumn:name="LastRotated",type=string,format=date-time,JSONPath=`.status.lastRotated`
// +kubebuilder:printcolumn:name="RotationEligible",type=string,format=date-time,JSONPath=`.status.rotationEligibleAt`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`
type KeystoneApplicationCredential struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   KeystoneApplicationCredentialSpec   `json:"spec,omitempty"`
	Status KeystoneApplicationCredentialStatus `json:"status,omitempty"`
}

// KeystoneApplicationCredentialList is a list of KeystoneApplicationCredential.
//
// +kubebuilder:object:root=true
type KeystoneApplicationCredentialList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KeystoneApplicationCredential `json:"items"`
}

func init() {
	SchemeBuilder.Register(&KeystoneApplicationCredential{}, &KeystoneApplicationCredentialList{})
}

// IsReady tells whether the KeystoneApplicationCredential is Ready for its current generation.
func (ac *KeystoneApplicationCredential) IsReady() bool {
	return ac.Status.ObservedGeneration == ac.Generation && ac.Status.Conditions.IsTrue(condition.ReadyCondition)
}

// Names and keys keystone-operator's helpers and the service operators use.
const (
	// ACIDSecretKey is the key of the credential's ID in its Secret.
	ACIDSecretKey = "AC_ID"
	// ACSecretSecretKey is the key of the credential's secret in its Secret.
	ACSecretSecretKey = "AC_SECRET"
	// EDPMServiceAnnotation set to "false" says the credential is not deployed to
	// data plane nodes; otherwise clean-up and deletion wait until every NodeSet has
	// deployed the current Secrets.
	EDPMServiceAnnotation = "keystone.openstack.org/edpm-service"
	// ACSecretLabel marks the Secrets of application credentials.
	ACSecretLabel = "application-credentials"
	// ACServiceLabel names the service of an application credential's Secret.
	ACServiceLabel = "application-credential-service"
)

// GetACCRName is the name of the KeystoneApplicationCredential of a service, as
// openstack-operator names it.
func GetACCRName(serviceName string) string { return "ac-" + serviceName }

// GetServiceNameFromACCR is the service of a KeystoneApplicationCredential named by GetACCRName.
func GetServiceNameFromACCR(acName string) string {
	if len(acName) > 3 && acName[:3] == "ac-" {
		return acName[3:]
	}
	return acName
}

// IsEDPMService tells whether the credential may be deployed to data plane nodes: unless
// the annotation says "false" (a missing annotation is the safe assumption).
func (ac *KeystoneApplicationCredential) IsEDPMService() bool {
	return ac.GetAnnotations()[EDPMServiceAnnotation] != "false"
}
