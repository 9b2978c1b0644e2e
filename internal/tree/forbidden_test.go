package tree

import (
	"context"
	"errors"
	"testing"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/cmd/manager"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// TestForbiddenSecret: a credential's Secret the user may not read is drawn as such,
// and the rest of the tree is drawn (it failed the whole tree before).
func TestForbiddenSecret(t *testing.T) {
	g := NewWithT(t)
	ac := &keystonev1.KeystoneApplicationCredential{ObjectMeta: metav1.ObjectMeta{Name: "ac-glance", Namespace: "openstack"},
		Status: keystonev1.KeystoneApplicationCredentialStatus{SecretName: "ac-glance-secret"}}
	c := fake.NewClientBuilder().WithScheme(manager.Scheme).WithObjects(ac).WithStatusSubresource(ac).
		WithInterceptorFuncs(interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object,
			opts ...client.GetOption) error {
			if _, secret := obj.(*corev1.Secret); secret {
				return apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, key.Name, errors.New("no"))
			}
			return c.Get(ctx, key, obj, opts...)
		}}).Build()
	nodes, err := Build(context.Background(), c, "openstack", "", Options{Show: ShowBlocking})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(nodes).To(HaveLen(1))
	g.Expect(nodes[0].Name).To(Equal("ac-glance"))
	g.Expect(nodes[0].Children).To(ContainElement(HaveField("Note", "current, not readable (forbidden to you)")))
}
