// Package conformance plays the operators that depend on Keystone (placement, glance,
// nova, heat, ...) against this suite, with keystone-operator's own Go helpers
// (github.com/openstack-k8s-operators/keystone-operator/api) used exactly as those
// operators use them. It is a module of its own so that upstream's dependencies never
// enter the operator's go.mod. CONFORMANCE_CRDS=ours|upstream selects the CRDs
// installed: this suite's, or keystone-operator's files from the pinned module, as
// openstack-operator installs them.
package conformance
