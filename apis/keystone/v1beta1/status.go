package v1beta1

import (
	"github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
)

// The status each kind reports through the condition engine (the operator's
// internal/reconciler): its conditions, the generation they describe, and the objects it
// created or holds. One set of accessors per kind, so that the engine reads and writes
// every kind's status the same way (Cluster API's conditions Getter and Setter).

// GetConditions returns the KeystoneAPI's conditions.
func (k *KeystoneAPI) GetConditions() condition.Conditions { return k.Status.Conditions }

// SetConditions replaces the KeystoneAPI's conditions.
func (k *KeystoneAPI) SetConditions(c condition.Conditions) { k.Status.Conditions = c }

// SetObservedGeneration records the generation the KeystoneAPI's conditions describe.
func (k *KeystoneAPI) SetObservedGeneration(g int64) { k.Status.ObservedGeneration = g }

// SetRelatedObjects replaces the objects the KeystoneAPI created or holds.
func (k *KeystoneAPI) SetRelatedObjects(o []corev1.ObjectReference) { k.Status.RelatedObjects = o }

// GetConditions returns the KeystoneService's conditions.
func (k *KeystoneService) GetConditions() condition.Conditions { return k.Status.Conditions }

// SetConditions replaces the KeystoneService's conditions.
func (k *KeystoneService) SetConditions(c condition.Conditions) { k.Status.Conditions = c }

// SetObservedGeneration records the generation the KeystoneService's conditions describe.
func (k *KeystoneService) SetObservedGeneration(g int64) { k.Status.ObservedGeneration = g }

// SetRelatedObjects replaces the objects the KeystoneService holds.
func (k *KeystoneService) SetRelatedObjects(o []corev1.ObjectReference) { k.Status.RelatedObjects = o }

// GetConditions returns the KeystoneEndpoint's conditions.
func (k *KeystoneEndpoint) GetConditions() condition.Conditions { return k.Status.Conditions }

// SetConditions replaces the KeystoneEndpoint's conditions.
func (k *KeystoneEndpoint) SetConditions(c condition.Conditions) { k.Status.Conditions = c }

// SetObservedGeneration records the generation the KeystoneEndpoint's conditions describe.
func (k *KeystoneEndpoint) SetObservedGeneration(g int64) { k.Status.ObservedGeneration = g }

// SetRelatedObjects replaces the objects the KeystoneEndpoint holds.
func (k *KeystoneEndpoint) SetRelatedObjects(o []corev1.ObjectReference) { k.Status.RelatedObjects = o }

// GetConditions returns the KeystoneApplicationCredential's conditions.
func (k *KeystoneApplicationCredential) GetConditions() condition.Conditions {
	return k.Status.Conditions
}

// SetConditions replaces the KeystoneApplicationCredential's conditions.
func (k *KeystoneApplicationCredential) SetConditions(c condition.Conditions) {
	k.Status.Conditions = c
}

// SetObservedGeneration records the generation the KeystoneApplicationCredential's
// conditions describe.
func (k *KeystoneApplicationCredential) SetObservedGeneration(g int64) {
	k.Status.ObservedGeneration = g
}

// SetRelatedObjects replaces the objects the KeystoneApplicationCredential holds.
func (k *KeystoneApplicationCredential) SetRelatedObjects(o []corev1.ObjectReference) {
	k.Status.RelatedObjects = o
}
