package reconciler

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// TestCreateOrPatch: created when missing, patched with what changed, and no request
// at all when nothing did, an empty map standing for a missing one and a quantity
// written another way included.
func TestCreateOrPatch(t *testing.T) {
	g := NewWithT(t)
	scheme := runtime.NewScheme()
	g.Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	var patches []string
	c := fake.NewClientBuilder().WithScheme(scheme).WithInterceptorFuncs(interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			data, err := patch.Data(obj)
			if err != nil {
				return err
			}
			patches = append(patches, string(data))
			return c.Patch(ctx, obj, patch, opts...)
		},
	}).Build()
	ctx := context.Background()
	cm := func() *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns"}}
	}
	write := func(data map[string]string, labels map[string]string) controllerutil.OperationResult {
		obj := cm()
		op, err := CreateOrPatch(ctx, c, obj, func() error {
			obj.Data, obj.Labels = data, labels
			return nil
		})
		g.Expect(err).NotTo(HaveOccurred())
		return op
	}
	g.Expect(write(map[string]string{"a": "1"}, nil)).To(Equal(controllerutil.OperationResultCreated))
	g.Expect(write(map[string]string{"a": "1"}, nil)).To(Equal(controllerutil.OperationResultNone))
	g.Expect(write(map[string]string{"a": "1"}, map[string]string{})).To(Equal(controllerutil.OperationResultNone),
		"an empty map where there was none marshals to nothing")
	g.Expect(patches).To(BeEmpty())
	g.Expect(write(map[string]string{"a": "2"}, nil)).To(Equal(controllerutil.OperationResultUpdated))
	g.Expect(patches).To(Equal([]string{`{"data":{"a":"2"}}`}))

	quota := func(cpu string) (controllerutil.OperationResult, error) {
		obj := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: "ns"}}
		return CreateOrPatch(ctx, c, obj, func() error {
			obj.Spec.Hard = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
			return nil
		})
	}
	g.Expect(quota("1")).To(Equal(controllerutil.OperationResultCreated))
	g.Expect(quota("1000m")).To(Equal(controllerutil.OperationResultNone), "the same quantity written another way")
	g.Expect(patches).To(HaveLen(1))

	obj := cm()
	_, err := CreateOrPatch(ctx, c, obj, func() error { obj.Name = "other"; return nil })
	g.Expect(err).To(MatchError(ContainSubstring("name or namespace changed")))
}
