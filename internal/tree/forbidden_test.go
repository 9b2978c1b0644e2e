package tree

import (
	"context"
	"errors"
	"os"
	"path/filepath"
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
	nodes, err := Build(context.Background(), c, "openstack", nil, Options{Show: ShowBlocking})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(nodes).To(HaveLen(1))
	g.Expect(nodes[0].Name).To(Equal("ac-glance"))
	g.Expect(nodes[0].Children).To(ContainElement(HaveField("Note", "current, not readable (forbidden to you)")))
}

// TestTerminatedPicksTheCause: a failed pod's note quotes the line of keystone-manage's
// log that says why, as the KeystoneAPI's own message does (deploy.FailureLine), not the
// log's first line.
func TestTerminatedPicksTheCause(t *testing.T) {
	g := NewWithT(t)
	realLog, err := os.ReadFile(filepath.Join("..", "deploy", "testdata", "db-sync-access-denied.log"))
	g.Expect(err).NotTo(HaveOccurred())
	pod := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{Name: "keystone-db-sync",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1, Message: string(realLog)}}}}}}
	g.Expect(terminated(pod)).To(Equal(`container keystone-db-sync Error (exit code 1): sqlalchemy.exc.OperationalError: ` +
		`(pymysql.err.OperationalError) (1045, "Access denied for user 'keystone'@'10.244.0.23' (using password: YES)")`))
}
