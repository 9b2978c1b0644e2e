//go:build bench

package bench

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	"github.com/keystone-stepwise/keystone-operator/tests/support/testutil"
	mariadbv1 "github.com/openstack-k8s-operators/mariadb-operator/api/v1beta1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

type (
	mariadbDatabase = mariadbv1.MariaDBDatabase
	mariadbAccount  = mariadbv1.MariaDBAccount
)

func logrDiscard() logr.Logger { return logr.Discard() }

// markReady waits for the operator to create the database or account "keystone" in
// ns and marks it Ready, as mariadb-operator would.
func markReady(ctx context.Context, ns string, obj client.Object) {
	key := client.ObjectKey{Namespace: ns, Name: "keystone"}
	for c.Get(ctx, key, obj) != nil {
		time.Sleep(5 * time.Millisecond)
	}
	must(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, key, obj); err != nil {
			return err
		}
		switch o := obj.(type) {
		case *mariadbv1.MariaDBDatabase:
			o.Status.Conditions = testutil.ReadyConditions()
		case *mariadbv1.MariaDBAccount:
			o.Status.Conditions = testutil.ReadyConditions()
		}
		return c.Status().Update(ctx, obj)
	}))
}
