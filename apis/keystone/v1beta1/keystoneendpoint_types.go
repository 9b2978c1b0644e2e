package v1beta1

import (
	"github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KeystoneEndpointSpec describes endpoints of a service to register in Keystone's
// catalog, in the KeystoneAPI's region. Several KeystoneEndpoints may register
// endpoints of one service (for example one per API of glance).
type KeystoneEndpointSpec struct {
	// ServiceName names the KeystoneService whose service the endpoints belong to (its
	// object name, which the upstream helpers set to its serviceName).
	// +kubebuilder:validation:MinLength=1
	ServiceName string `json:"serviceName"`

	// Endpoints maps an interface (public, internal, admin) to its absolute http or https
	// URL. Not validated at admission, as keystone-operator's schema does not: a service
	// operator may write a URL without a host for a moment (its Route has none yet).
	// EndpointsReady reports what cannot be registered.
	Endpoints map[string]string `json:"endpoints"`
}

// KeystoneEndpointStatus is what the operator observed of a KeystoneEndpoint.
type KeystoneEndpointStatus struct {
	// EndpointIDs are the IDs of the endpoints this object registered, by interface.
	// +optional
	EndpointIDs map[string]string `json:"endpointIDs,omitempty"`

	// ServiceID is the ID of the service in Keystone.
	// +optional
	ServiceID string `json:"serviceID,omitempty"`

	// RelatedObjects are the objects this KeystoneEndpoint holds (its KeystoneService) that
	// exist, in a fixed order (apiVersion, kind, namespace, name and uid; no
	// resourceVersion, which would make every change of them a write here): what an audit,
	// or an admin on call, looks at first.
	// +optional
	RelatedObjects []corev1.ObjectReference `json:"relatedObjects,omitempty"`

	// Conditions: Ready first, then each step in order.
	// +optional
	Conditions condition.Conditions `json:"conditions,omitempty"`

	// Endpoints lists the registered endpoints, sorted by interface.
	// +optional
	Endpoints []Endpoint `json:"endpoints,omitempty"`

	// ObservedGeneration is the generation the conditions describe.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// Endpoint is one registered endpoint.
type Endpoint struct {
	// Interface is public, internal or admin.
	Interface string `json:"interface"`
	// URL of the endpoint.
	URL string `json:"url"`
	// ID of the endpoint in Keystone.
	ID string `json:"id"`
	// Region the endpoint is in: the KeystoneAPI's (an addition of this suite, pruned on
	// keystone-operator's schema).
	// +optional
	Region string `json:"region,omitempty"`
}

// KeystoneEndpoint registers a service's endpoints in Keystone.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=openstack
// +kubebuilder:printcolumn:name="Service",type=string,JSONPath=`.spec.serviceName`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`
// +kubebuilder:printcolumn:name="URLs",type=string,JSONPath=`.status.endpoints[*].url`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type KeystoneEndpoint struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   KeystoneEndpointSpec   `json:"spec,omitempty"`
	Status KeystoneEndpointStatus `json:"status,omitempty"`
}

// KeystoneEndpointList is a list of KeystoneEndpoint.
//
// +kubebuilder:object:root=true
type KeystoneEndpointList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KeystoneEndpoint `json:"items"`
}

func init() {
	SchemeBuilder.Register(&KeystoneEndpoint{}, &KeystoneEndpointList{})
}

// IsReady tells whether the KeystoneEndpoint is Ready for its current generation.
func (k *KeystoneEndpoint) IsReady() bool {
	return k.Status.ObservedGeneration == k.Generation && k.Status.Conditions.IsTrue(condition.ReadyCondition)
}
