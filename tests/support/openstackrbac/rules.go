// Package openstackrbac states the permissions openstack-operator gives keystone-operator
// (and so whatever image runs in its place): the ClusterRole keystone-operator-manager-role
// of openstack-operator's config/operator/bundle-rbac/keystone-operator-manager-role.yaml
// at commit 84322c77 (2026-08-19), rule by rule as group, resources and verbs, and the
// resource names a rule is limited to.
package openstackrbac

import (
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
)

// SourceCommit is the openstack-operator commit the rules were read at.
const SourceCommit = "84322c77"

// rules are the ClusterRole's rules: group, resources and verbs, comma separated.
var rules = [][3]string{
	{"", "configmaps,secrets,services", "create,delete,get,list,patch,update,watch"},
	{"", "events", "create,patch"},
	{"", "pods", "get,list"},
	{"", "secrets/finalizers", "create,delete,get,list,patch,update"},
	{"", "serviceaccounts", "create,get,list,patch,update,watch"},
	{"apps", "deployments", "create,delete,get,list,patch,update,watch"},
	{"batch", "cronjobs,jobs", "create,delete,get,list,patch,update,watch"},
	{"dataplane.openstack.org", "openstackdataplanenodesets", "get,list,watch"},
	{"k8s.cni.cncf.io", "network-attachment-definitions", "get,list,watch"},
	{"keystone.openstack.org", "keystoneapis,keystoneapplicationcredentials,keystoneendpoints,keystoneservices", "create,delete,get,list,patch,update,watch"},
	{"keystone.openstack.org", "keystoneapis/finalizers,keystoneapplicationcredentials/finalizers,keystoneendpoints/finalizers,keystoneservices/finalizers", "patch,update"},
	{"keystone.openstack.org", "keystoneapis/status,keystoneapplicationcredentials/status,keystoneendpoints/status,keystoneservices/status", "get,patch,update"},
	{"mariadb.openstack.org", "mariadbaccounts,mariadbdatabases", "create,delete,get,list,patch,update,watch"},
	{"mariadb.openstack.org", "mariadbaccounts/finalizers", "patch,update"},
	{"memcached.openstack.org", "memcacheds", "get,list,patch,update,watch"},
	{"memcached.openstack.org", "memcacheds/finalizers", "patch,update"},
	{"rabbitmq.openstack.org", "transporturls", "create,delete,get,list,patch,update,watch"},
	{"rbac.authorization.k8s.io", "rolebindings,roles", "create,get,list,patch,update,watch"},
	{"route.openshift.io", "routes", "create,delete,get,list,patch,update,watch"},
	// Limited to resourceNames [anyuid] (namedRules).
	{"security.openshift.io", "securitycontextconstraints", "use"},
	{"topology.openstack.org", "topologies", "get,list,update,watch"},
	{"authentication.k8s.io", "tokenreviews", "create"},
	{"authorization.k8s.io", "subjectaccessreviews", "create"},
}

// namedRules are the resource names of the rules limited to some, by group/resources.
var namedRules = map[string][]string{"security.openshift.io/securitycontextconstraints": {"anyuid"}}

// Rules returns the ClusterRole's rules.
func Rules() []rbacv1.PolicyRule { return policyRules(rules) }

func policyRules(rules [][3]string) []rbacv1.PolicyRule {
	out := make([]rbacv1.PolicyRule, 0, len(rules))
	for _, r := range rules {
		out = append(out, rbacv1.PolicyRule{APIGroups: []string{r[0]}, Resources: strings.Split(r[1], ","), Verbs: strings.Split(r[2], ","),
			ResourceNames: namedRules[r[0]+"/"+r[1]]})
	}
	return out
}

// leaderElectionRules are the Role keystone-operator-leader-election-role that
// openstack-operator binds to that ServiceAccount in the operators' namespace
// (config/operator/bundle-rbac/keystone-operator-leader-election-role.yaml at SourceCommit).
var leaderElectionRules = [][3]string{
	{"", "configmaps", "get,list,watch,create,update,patch,delete"},
	{"coordination.k8s.io", "leases", "get,list,watch,create,update,patch,delete"},
	{"", "events", "create,patch"},
}

// LeaderElectionRules returns the leader election Role's rules.
func LeaderElectionRules() []rbacv1.PolicyRule { return policyRules(leaderElectionRules) }
