package manager

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"io"
	"slices"
	"sort"

	"github.com/go-logr/logr"
	"github.com/keystone-stepwise/keystone-operator/config/rbac"
	"github.com/keystone-stepwise/keystone-operator/internal/permissions"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// degraded says what the manager does without an optional permission, by
// "verb group/resource"; every other permission of config/rbac is required: the step
// that needs it fails with the API server's 403 in its message.
var degraded = map[string]string{
	"get /namespaces": "the kube-system namespace is not read: a new cluster identity is made once and kept in " +
		"ConfigMap " + identity.ClusterConfigMap + " of the operator's namespace",
	"patch topology.openstack.org/topologies": "the finalizer on a KeystoneAPI's Topology is added with an update instead",
	"watch /pods": "a db-sync or bootstrap job is taken as done when its Job says so, about a second after its pod " +
		"succeeded, instead of at once",
	"use security.openshift.io/securitycontextconstraints": "the Keystone pods' Role grants the SecurityContextConstraints " +
		"anyuid (when the manager may use it) instead of nonroot-v2, and the pods set no seccomp profile, which anyuid refuses",
}

// withoutPDBs is what the manager does without one of the permissions on
// PodDisruptionBudgets (openstack-operator's role for keystone-operator grants none).
const withoutPDBs = "the Keystone API pods get no PodDisruptionBudget (PDBReady says so): a drain may evict every replica at once"

func init() {
	for _, verb := range []string{"get", "list", "watch", "create", "update", "patch", "delete"} {
		degraded[verb+" policy/poddisruptionbudgets"] = withoutPDBs
	}
}

// Needed are the permissions config/rbac grants the manager, one "verb group/resource"
// each (the core group is empty), read from the embedded ClusterRoles.
func Needed() ([]rbacv1.PolicyRule, error) {
	var rules []rbacv1.PolicyRule
	for _, doc := range [][]byte{rbac.Role, rbac.ClusterIdentityRole} {
		dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(doc), 4096)
		for {
			var role rbacv1.ClusterRole
			err := dec.Decode(&role)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("reading the embedded RBAC: %w", err)
			}
			if role.Kind == "ClusterRole" {
				rules = append(rules, role.Rules...)
			}
		}
	}
	return rules, nil
}

// Lacking lists, as "verb group/resource", what the rules needed grant and the rules
// have do not, sorted.
func Lacking(needed []rbacv1.PolicyRule, have permissions.Rules) []string {
	var out []string
	for _, rule := range needed {
		for _, group := range rule.APIGroups {
			for _, resource := range rule.Resources {
				for _, verb := range rule.Verbs {
					if !have.Allows(verb, group, resource, rule.ResourceNames...) {
						out = append(out, verb+" "+group+"/"+resource)
					}
				}
			}
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// CheckPermissions asks the API server what the manager may do in namespace (one
// SelfSubjectRulesReview) and logs each permission of config/rbac it lacks: an
// optional one with what the manager does without it, a required one as an error. It
// returns the lacking ones and the rules, which the manager follows so as to ask for
// nothing it would be refused (zero rules, allowing everything, when the answer was
// incomplete or the review failed: both are logged).
func CheckPermissions(ctx context.Context, c client.Client, namespace string, log logr.Logger) ([]string, permissions.Rules, error) {
	needed, err := Needed()
	if err != nil {
		return nil, permissions.Rules{}, err
	}
	rules, incomplete, err := permissions.Review(ctx, c, namespace)
	if err != nil {
		return nil, permissions.Rules{}, err
	}
	if !rules.Known() {
		log.Info("the API server's answer on the manager's permissions is incomplete; permissions are not checked", "reason", incomplete)
		return nil, rules, nil
	}
	lacking := Lacking(needed, rules)
	for _, p := range lacking {
		if what, ok := degraded[p]; ok {
			log.Info("optional permission missing", "permission", p, "without it", what)
			continue
		}
		log.Error(nil, "required permission missing: the steps that need it fail with 403", "permission", p, "namespace", namespace)
	}
	return lacking, rules, nil
}

// checkPermissions is CheckPermissions run once at start, in the first watched
// namespace (default when all are watched); rules allowing everything when it fails.
func checkPermissions(ctx context.Context, c client.Client, namespaces []string) permissions.Rules {
	namespace := "default"
	if len(namespaces) > 0 {
		namespace = namespaces[0]
	}
	log := ctrl.Log.WithName("permissions")
	_, rules, err := CheckPermissions(ctx, c, namespace, log)
	if err != nil {
		log.Error(err, "the manager's permissions could not be checked")
	}
	return rules
}
