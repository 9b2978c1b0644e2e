package manager

import (
	"context"
	"errors"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// TestClusterIdentity: a read that fails for a moment is tried again (no mark written
// without the cluster because the API server was busy at start); a refused one is "" at once.
func TestClusterIdentity(t *testing.T) {
	g := NewWithT(t)
	kubeSystem := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: metav1.NamespaceSystem, UID: "cluster-a"}}
	failing := func(first error, times int) (client.Client, *int) {
		calls := 0
		c := fake.NewClientBuilder().WithObjects(kubeSystem).WithInterceptorFuncs(interceptor.Funcs{
			Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				calls++
				if calls <= times {
					return first
				}
				return c.Get(ctx, key, obj, opts...)
			},
		}).Build()
		return c, &calls
	}

	c, calls := failing(errors.New("the server is currently unable to handle the request"), 1)
	g.Expect(ClusterIdentity(context.Background(), c)).To(Equal("cluster-a"), "tried again")
	g.Expect(*calls).To(Equal(2))

	c, calls = failing(apierrors.NewForbidden(schema.GroupResource{Resource: "namespaces"}, "kube-system", errors.New("no")), 100)
	g.Expect(ClusterIdentity(context.Background(), c)).To(BeEmpty())
	g.Expect(*calls).To(Equal(1), "a refusal is final")
}
