// Package rbac holds the manager's ClusterRoles as `make manifests` generates them
// (role.yaml) and as written by hand (cluster_identity_role.yaml), so that the manager
// can tell at start-up which of their permissions it lacks (cmd/manager).
package rbac

import _ "embed"

// Role is role.yaml: the manager's ClusterRole, from the controllers' markers.
//
//go:embed role.yaml
var Role []byte

// ClusterIdentityRole is cluster_identity_role.yaml: reading the kube-system namespace.
//
//go:embed cluster_identity_role.yaml
var ClusterIdentityRole []byte
