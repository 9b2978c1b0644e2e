package keystoneapplicationcredential

import (
	"context"
	"fmt"
	"sort"

	oksecret "github.com/openstack-k8s-operators/lib-common/modules/common/secret"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The data plane's NodeSets deploy Secrets (credentials included) to compute nodes and
// record in status.secretHashes the hash of each Secret they last deployed. An
// application credential may be revoked only once every NodeSet has deployed the
// current Secrets, as keystone-operator does; where the kind is not installed there is
// no data plane to wait for.
var nodeSetGVK = schema.GroupVersionKind{Group: "dataplane.openstack.org", Version: "v1beta1", Kind: "OpenStackDataPlaneNodeSet"}

// nodeSetsInstalled tells whether the cluster serves the NodeSet kind.
func nodeSetsInstalled(mapper apimeta.RESTMapper) bool {
	_, err := mapper.RESTMapping(nodeSetGVK.GroupKind(), nodeSetGVK.Version)
	return err == nil
}

// nodeSetsInSync tells whether every NodeSet of the namespace deployed the Secrets
// it lists as they are now; when not, why says which NodeSet and Secret lag. Every
// Secret a NodeSet lists counts, not only the credential's own: the nodes receive the
// credential inside the services' configuration Secrets (nova's compute configuration,
// for example), as keystone-operator also judges (lib-common's AreSecretHashesInSync).
// A Secret it deployed that no longer exists lags too, as there: its nodes still run
// what it held (a configuration Secret replaced by one of another name) until the
// NodeSet deploys again. A NodeSet being deleted is waited for as well, as there: its
// nodes run what it deployed until it is gone. (In a namespace being deleted, whose
// Secrets may go first, the KeystoneAPI is being deleted too, and a deletion then asks
// no NodeSet: leaveKeystone.)
func nodeSetsInSync(ctx context.Context, c client.Reader, ns string) (inSync bool, why string, err error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(nodeSetGVK.GroupVersion().WithKind(nodeSetGVK.Kind + "List"))
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		if apimeta.IsNoMatchError(err) {
			return true, "", nil
		}
		return false, "", fmt.Errorf("listing OpenStackDataPlaneNodeSets: %w", err)
	}
	hashes := map[string]string{}
	for _, nodeSet := range list.Items {
		deployed, _, err := unstructured.NestedStringMap(nodeSet.Object, "status", "secretHashes")
		if err != nil {
			return false, "", fmt.Errorf("reading status.secretHashes of NodeSet %s: %w", nodeSet.GetName(), err)
		}
		names := make([]string, 0, len(deployed))
		for name := range deployed {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			current, ok := hashes[name]
			if !ok {
				secret := &corev1.Secret{}
				if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, secret); err != nil {
					if apierrors.IsNotFound(err) {
						return false, fmt.Sprintf("NodeSet %s deployed secret %s, which no longer exists, and has not "+
							"deployed since", nodeSet.GetName(), name), nil
					}
					return false, "", fmt.Errorf("reading secret %s: %w", name, err)
				}
				// lib-common's hash, the one the NodeSets record.
				if current, err = oksecret.Hash(secret); err != nil {
					return false, "", fmt.Errorf("hashing secret %s: %w", name, err)
				}
				hashes[name] = current
			}
			if current != deployed[name] {
				return false, fmt.Sprintf("NodeSet %s has not deployed secret %s as it is now", nodeSet.GetName(), name), nil
			}
		}
	}
	return true, "", nil
}
