package keystoneservice

import (
	"context"
	"fmt"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/finalizers"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FinalizerIndex indexes the KeystoneServices in the cache by their finalizers. This
// controller registers it (SetupWithManager); both it and the KeystoneEndpoint
// controller find through it the KeystoneServices a KeystoneEndpoint holds (HeldBy).
const FinalizerIndex = "metadata.finalizers"

// finalizersOf is what FinalizerIndex indexes a KeystoneService under.
func finalizersOf(o client.Object) []string { return o.GetFinalizers() }

// HeldBy returns the KeystoneServices of namespace ns that the KeystoneEndpoint named
// endpoint holds, with this suite's finalizer (finalizers.For) or keystone-operator's
// (finalizers.Upstream). They are found by FinalizerIndex: only they are read (and
// copied), not every KeystoneService of the namespace.
func HeldBy(ctx context.Context, c client.Reader, ns, endpoint string) ([]*keystonev1.KeystoneService, error) {
	var out []*keystonev1.KeystoneService
	seen := map[types.UID]bool{}
	for _, f := range []string{finalizers.For("keystoneendpoint", endpoint), finalizers.Upstream("keystoneendpoint", endpoint)} {
		list := &keystonev1.KeystoneServiceList{}
		if err := c.List(ctx, list, client.InNamespace(ns), client.MatchingFields{FinalizerIndex: f}); err != nil {
			return nil, fmt.Errorf("listing the KeystoneServices held by %s: %w", f, err)
		}
		for i := range list.Items {
			if !seen[list.Items[i].UID] {
				seen[list.Items[i].UID] = true
				out = append(out, &list.Items[i])
			}
		}
	}
	return out, nil
}
