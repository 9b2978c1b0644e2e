package v1beta1

import (
	"github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KeystoneServiceSpec describes a service to register in Keystone's catalog, its
// service user and the roles of that user. Its endpoints are KeystoneEndpoints.
type KeystoneServiceSpec struct {
	// ServiceType is the catalog type, for example image or compute.
	// +kubebuilder:validation:MinLength=1
	ServiceType string `json:"serviceType"`

	// ServiceName is the catalog name, for example glance.
	// +kubebuilder:validation:MinLength=1
	ServiceName string `json:"serviceName"`

	// ServiceDescription is shown in the catalog.
	// +optional
	ServiceDescription string `json:"serviceDescription,omitempty"`

	// Enabled registers the service as enabled.
	// +kubebuilder:default=true
	// +optional
	Enabled *bool `json:"enabled,omitempty"`

	// ServiceUser is the name of the user the service authenticates as.
	// +kubebuilder:validation:MinLength=1
	ServiceUser string `json:"serviceUser"`

	// Secret names the Secret that holds the service user's password.
	// +kubebuilder:validation:MinLength=1
	Secret string `json:"secret"`

	// PasswordSelector is the key of Secret that holds the password.
	// +kubebuilder:validation:MinLength=1
	PasswordSelector string `json:"passwordSelector"`

	// Roles are assigned to the service user on the service project. An extension of
	// this suite: where the field is absent (keystone-operator's schema prunes it) the
	// roles are keystone-operator's, DefaultServiceRoles.
	// +kubebuilder:default={admin,service}
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:items:MinLength=1
	// +listType=set
	// +optional
	Roles []string `json:"roles,omitempty"`
}

// DefaultServiceRoles are the roles of a service user when the spec names none.
var DefaultServiceRoles = []string{"admin", "service"}

// ServiceRoles returns the roles of the spec, DefaultServiceRoles when it names none.
func (s KeystoneServiceSpec) ServiceRoles() []string {
	if len(s.Roles) == 0 {
		return DefaultServiceRoles
	}
	return s.Roles
}

// KeystoneServiceStatus is what the operator observed of a KeystoneService.
type KeystoneServiceStatus struct {
	// ServiceID is the ID of the service in Keystone.
	// +optional
	ServiceID string `json:"serviceID,omitempty"`

	// RelatedObjects are the objects this KeystoneService holds (its password Secret) that
	// exist, in a fixed order (apiVersion, kind, namespace, name and uid; no
	// resourceVersion, which would make every change of them a write here): what an audit,
	// or an admin on call, looks at first.
	// +optional
	RelatedObjects []corev1.ObjectReference `json:"relatedObjects,omitempty"`

	// Conditions: Ready first, then each step in order.
	// +optional
	Conditions condition.Conditions `json:"conditions,omitempty"`

	// ObservedGeneration is the generation the conditions describe.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// KeystoneService registers an OpenStack service in Keystone.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=openstack
// +kubebuilder:printcolumn:name="ServiceID",type=string,JSONPath=`.status.serviceID`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type KeystoneService struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   KeystoneServiceSpec   `json:"spec,omitempty"`
	Status KeystoneServiceStatus `json:"status,omitempty"`
}

// KeystoneServiceList is a list of KeystoneService.
//
// +kubebuilder:object:root=true
type KeystoneServiceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KeystoneService `json:"items"`
}

func init() {
	SchemeBuilder.Register(&KeystoneService{}, &KeystoneServiceList{})
}

// IsReady tells whether the KeystoneService is Ready for its current generation.
// keystone-operator's schema has no status.observedGeneration (it is pruned, so it
// reads 0): there, Ready alone is all a reader can go by.
func (k *KeystoneService) IsReady() bool {
	observed := k.Status.ObservedGeneration == k.Generation || k.Status.ObservedGeneration == 0
	return observed && k.Status.Conditions.IsTrue(condition.ReadyCondition)
}
