package v1beta1

import (
	"context"
	"fmt"
	"time"

	"github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// WaitForKeystoneService polls a KeystoneService every interval until it is Ready for
// its current generation, and returns it. A reconciler should rather watch
// KeystoneServices and check IsReady; this is for programs and tests. The error of a
// timeout carries the blocking step's message.
func WaitForKeystoneService(ctx context.Context, c client.Reader, key client.ObjectKey, interval time.Duration) (*KeystoneService, error) {
	svc := &KeystoneService{}
	for {
		err := c.Get(ctx, key, svc)
		if err == nil && svc.IsReady() {
			return svc, nil
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return nil, fmt.Errorf("KeystoneService %s: %w", key, err)
			}
			return nil, fmt.Errorf("KeystoneService %s not ready: %s: %w", key, readyMessage(svc.Status.Conditions), ctx.Err())
		case <-time.After(interval):
		}
	}
}

func readyMessage(conds condition.Conditions) string {
	if c := conds.Get(condition.ReadyCondition); c != nil {
		return c.Message
	}
	return "no status yet"
}
