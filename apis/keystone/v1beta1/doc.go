// Package v1beta1 holds the keystone.openstack.org/v1beta1 API: KeystoneAPI, KeystoneService,
// their condition types and reasons, and the helpers that dependent operators import.
//
// +kubebuilder:object:generate=true
// +groupName=keystone.openstack.org
package v1beta1
