package deploy

import (
	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Keystone's pods run as a ServiceAccount of their own, bound to a Role that may use the
// SecurityContextConstraints nonroot-v2: on OpenShift, where openstack-operator runs, a
// namespace's default ServiceAccount is admitted only under restricted-v2, which
// refuses the image's fixed keystone UID (it must fall in the namespace's range).
// nonroot-v2 admits any UID but root, and nothing restricted-v2 refuses besides: the pods
// drop every capability, never escalate and use the runtime's seccomp profile
// (RestrictedPod, RestrictedContainer). keystone-operator's pods, started by kolla with
// sudo, need anyuid; glance-operator lowered its pods to nonroot-v2 the same way.
// A Role may grant only what its writer holds: where the operator may not use
// nonroot-v2 but may use anyuid (openstack-operator's role for keystone-operator grants
// anyuid alone), the Role grants anyuid (PodSCC), which admits the same pods once they
// set no seccomp profile (Gathered.finish).
// keystone-operator names the ServiceAccount, Role and RoleBinding the same way.
// Elsewhere the Role grants nothing the cluster knows of.

// NonRootSCC and AnyUIDSCC are the SecurityContextConstraints the pods' ServiceAccount
// may be given: the first the operator may grant.
const (
	NonRootSCC = "nonroot-v2"
	AnyUIDSCC  = "anyuid"
)

// PodSCC is the SecurityContextConstraints the pods' Role grants: nonroot-v2 when the
// operator may use it (so may grant it), else anyuid when it may use that, else
// nonroot-v2 (the API server then says what is missing).
func PodSCC(mayUse func(scc string) bool) string {
	if !mayUse(NonRootSCC) && mayUse(AnyUIDSCC) {
		return AnyUIDSCC
	}
	return NonRootSCC
}

// ServiceAccountName is the ServiceAccount every pod of a KeystoneAPI runs as.
func ServiceAccountName(api *keystonev1.KeystoneAPI) string { return "keystone-" + api.Name }

// RoleName is the Role of the pods' ServiceAccount.
func RoleName(api *keystonev1.KeystoneAPI) string { return ServiceAccountName(api) + "-role" }

// RoleBindingName binds RoleName to the pods' ServiceAccount.
func RoleBindingName(api *keystonev1.KeystoneAPI) string {
	return ServiceAccountName(api) + "-rolebinding"
}

// ServiceAccount is the pods' ServiceAccount.
func ServiceAccount(api *keystonev1.KeystoneAPI) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: ServiceAccountName(api), Namespace: api.Namespace, Labels: Labels(api)}}
}

// PodRules are what the pods' ServiceAccount may do: use scc (PodSCC), nothing else.
// Keystone never calls the Kubernetes API (its pods mount no token).
func PodRules(scc string) []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{{
		APIGroups: []string{"security.openshift.io"}, Resources: []string{"securitycontextconstraints"},
		ResourceNames: []string{scc}, Verbs: []string{"use"},
	}}
}

// Role is the Role of the pods' ServiceAccount, which may use scc.
func Role(api *keystonev1.KeystoneAPI, scc string) *rbacv1.Role {
	return &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: RoleName(api), Namespace: api.Namespace, Labels: Labels(api)},
		Rules: PodRules(scc)}
}

// RoleBinding binds Role to the pods' ServiceAccount.
func RoleBinding(api *keystonev1.KeystoneAPI) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: RoleBindingName(api), Namespace: api.Namespace, Labels: Labels(api)},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: RoleName(api)},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: ServiceAccountName(api), Namespace: api.Namespace}},
	}
}
