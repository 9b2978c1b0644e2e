package manager

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"

	"github.com/go-logr/logr"
	"github.com/keystone-stepwise/keystone-operator/config/rbac"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmanager "sigs.k8s.io/controller-runtime/pkg/manager"
)

// degraded says what the manager does without an optional permission, by
// "verb group/resource"; every other permission of config/rbac is required: the step
// that needs it fails with the API server's 403 in its message.
var degraded = map[string]string{
	"get /namespaces": "the cluster's identity (the kube-system namespace's UID) stays unknown: marks in Keystone name no " +
		"cluster, and no predecessor's registration is claimed; give --cluster-id, or grant get on namespaces/kube-system",
	"patch topology.openstack.org/topologies": "the finalizer on a KeystoneAPI's Topology is added with an update instead",
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
// have (a SelfSubjectRulesReview's) do not, sorted.
func Lacking(needed []rbacv1.PolicyRule, have []authorizationv1.ResourceRule) []string {
	var out []string
	for _, rule := range needed {
		for _, group := range rule.APIGroups {
			for _, resource := range rule.Resources {
				for _, verb := range rule.Verbs {
					if !granted(have, group, resource, verb, rule.ResourceNames) {
						out = append(out, verb+" "+group+"/"+resource)
					}
				}
			}
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// granted tells whether a rule of have allows verb on group/resource (on names, when
// the need is for those names alone).
func granted(have []authorizationv1.ResourceRule, group, resource, verb string, names []string) bool {
	match := func(list []string, v string) bool { return slices.Contains(list, v) || slices.Contains(list, "*") }
	for _, r := range have {
		if !match(r.APIGroups, group) || !match(r.Resources, resource) || !match(r.Verbs, verb) {
			continue
		}
		if len(r.ResourceNames) == 0 || (len(names) > 0 && !slices.ContainsFunc(names, func(n string) bool { return !slices.Contains(r.ResourceNames, n) })) {
			return true
		}
	}
	return false
}

// CheckPermissions asks the API server what the manager may do in namespace (one
// SelfSubjectRulesReview) and logs each permission of config/rbac it lacks: an
// optional one with what the manager does without it, a required one as an error. It
// returns the lacking ones.
func CheckPermissions(ctx context.Context, c client.Client, namespace string, log logr.Logger) ([]string, error) {
	needed, err := Needed()
	if err != nil {
		return nil, err
	}
	review := &authorizationv1.SelfSubjectRulesReview{Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: namespace}}
	if err := c.Create(ctx, review); err != nil {
		return nil, fmt.Errorf("asking the API server what the manager may do: %w", err)
	}
	if review.Status.Incomplete {
		log.Info("the API server's answer on the manager's permissions is incomplete; permissions are not checked", "reason", review.Status.EvaluationError)
		return nil, nil
	}
	lacking := Lacking(needed, review.Status.ResourceRules)
	for _, p := range lacking {
		if what, ok := degraded[p]; ok {
			log.Info("optional permission missing", "permission", p, "without it", what)
			continue
		}
		log.Error(nil, "required permission missing: the steps that need it fail with 403", "permission", p, "namespace", namespace)
	}
	return lacking, nil
}

// permissionCheck is CheckPermissions run once at start, in the first watched namespace
// (default when all are watched).
func permissionCheck(c client.Client, namespaces []string) ctrlmanager.Runnable {
	return ctrlmanager.RunnableFunc(func(ctx context.Context) error {
		namespace := "default"
		if len(namespaces) > 0 {
			namespace = namespaces[0]
		}
		log := ctrl.Log.WithName("permissions")
		if _, err := CheckPermissions(ctx, c, namespace, log); err != nil {
			log.Error(err, "the manager's permissions could not be checked")
		}
		return nil
	})
}
