package handback

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// LeaseName is the leader election Lease of this operator, keystone-operator's own
// (cmd/manager.LeaderElectionID): whoever holds it reconciles.
const LeaseName = "6012128b.openstack.org"

// HeldError says the hand-back must not run: an operator holds the Lease, and would put
// back what the hand-back removes (or, keystone-operator, has started before it).
type HeldError struct {
	Namespace, Holder string
	Renewed           time.Duration
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("lease %s/%s is held by %s, renewed %s ago: an operator reconciles the Keystone objects; stop it "+
		"first (installed by openstack-operator: OpenStack.spec.operatorOverrides, name keystone, replicas 0; by hand: make "+
		"undeploy), then run the hand-back", e.Namespace, LeaseName, e.Holder, e.Renewed.Round(time.Second))
}

// CheckLease returns a *HeldError while an operator holds the Lease LeaseName in
// namespace ns, or in any namespace when ns is "": one renewed less than its duration
// ago, with a holder. now is the time to judge by.
func CheckLease(ctx context.Context, c client.Reader, ns string, now time.Time) error {
	var leases []coordinationv1.Lease
	if ns != "" {
		lease := coordinationv1.Lease{}
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: LeaseName}, &lease)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return fmt.Errorf("reading lease %s/%s: %w", ns, LeaseName, err)
		default:
			leases = append(leases, lease)
		}
	} else {
		list := &coordinationv1.LeaseList{}
		if err := c.List(ctx, list, client.MatchingFields{"metadata.name": LeaseName}); err != nil {
			return fmt.Errorf("looking for lease %s in every namespace (give --lease-namespace, the operator's): %w", LeaseName, err)
		}
		for _, l := range list.Items {
			if l.Name == LeaseName {
				leases = append(leases, l)
			}
		}
	}
	for _, l := range leases {
		if err := held(l, now); err != nil {
			return err
		}
	}
	return nil
}

// held is a *HeldError when l has a holder and was renewed within its duration.
func held(l coordinationv1.Lease, now time.Time) error {
	s := l.Spec
	if s.HolderIdentity == nil || *s.HolderIdentity == "" || s.RenewTime == nil {
		return nil
	}
	duration := 15 * time.Second
	if s.LeaseDurationSeconds != nil {
		duration = time.Duration(*s.LeaseDurationSeconds) * time.Second
	}
	if since := now.Sub(s.RenewTime.Time); since < duration {
		return &HeldError{Namespace: l.Namespace, Holder: *s.HolderIdentity, Renewed: since}
	}
	return nil
}
