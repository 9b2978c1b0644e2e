package finalizers

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/keystone-stepwise/keystone-operator/internal/permissions"
	. "github.com/onsi/gomega"
	topologyv1 "github.com/openstack-k8s-operators/infra-operator/apis/topology/v1beta1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

func TestFor(t *testing.T) {
	long := strings.Repeat("a", 200) + "." + strings.Repeat("b", 52)
	tests := []struct {
		name, kind, object, want string
	}{
		{"short names stay readable", "keystoneservice", "glance", "keystone.openstack.org/keystoneservice-glance"},
		{"exactly at the limit", "ks", strings.Repeat("x", 60), "keystone.openstack.org/ks-" + strings.Repeat("x", 60)},
		{"a 253-character name", "keystoneendpoint", long, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got := For(tt.kind, tt.object)
			if tt.want != "" {
				g.Expect(got).To(Equal(tt.want))
			}
			g.Expect(validation.IsQualifiedName(got)).To(BeEmpty(), got)
		})
	}
	g := NewWithT(t)
	a, b := long, long[:252]+"c"
	g.Expect(For("keystoneendpoint", a)).NotTo(Equal(For("keystoneendpoint", b)), "names differing only at the end")
	for n := 1; n <= 253; n++ {
		g.Expect(validation.IsQualifiedName(For("keystoneapplicationcredential", strings.Repeat("n", n)))).To(BeEmpty(), "length %d", n)
	}
}

func TestRemoveFromAnObjectNotRead(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	c := fake.NewClientBuilder().WithObjects(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Namespace: "ns", Name: "s", Finalizers: []string{"keep/me", Domain + "/mine"}}}).Build()
	// Only the name is known: Remove reads the object before it edits the list.
	g.Expect(Remove(ctx, c, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s"}}, Domain+"/mine")).To(Succeed())
	got := &corev1.Secret{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "s"}, got)).To(Succeed())
	g.Expect(got.Finalizers).To(Equal([]string{"keep/me"}))
	g.Expect(Remove(ctx, c, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gone"}}, Domain+"/mine")).To(Succeed(),
		"an object already gone is fine")
}

func TestAddRecordingWritesAnnotationsOnlyWithTheFinalizer(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	patches := 0
	c := fake.NewClientBuilder().WithObjects(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Namespace: "ns", Name: "s", Annotations: map[string]string{"other": "kept"}}}).
		WithInterceptorFuncs(interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			patches++
			return c.Patch(ctx, obj, patch, opts...)
		}}).Build()
	obj := &corev1.Secret{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "s"}, obj)).To(Succeed())
	g.Expect(AddRecording(ctx, c, obj, Domain+"/mine", map[string]string{"record": "first"})).To(Succeed())
	got := &corev1.Secret{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "s"}, got)).To(Succeed())
	g.Expect(got.Finalizers).To(Equal([]string{Domain + "/mine"}))
	g.Expect(got.Annotations).To(Equal(map[string]string{"other": "kept", "record": "first"}))
	g.Expect(patches).To(Equal(1), "the finalizer and the record in one patch")

	g.Expect(AddRecording(ctx, c, got, Domain+"/mine", map[string]string{"record": "second"})).To(Succeed())
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "s"}, got)).To(Succeed())
	g.Expect(got.Annotations).To(HaveKeyWithValue("record", "first"), "an object with the finalizer is left as it is")
	g.Expect(patches).To(Equal(1))
}

// TestAddPatchesMetadataOnly: the finalizer and the record travel as a patch of the
// metadata, locked on the version read, answered with the metadata alone; the object
// takes the version the API server answers, and the rest of it stays as read.
func TestAddPatchesMetadataOnly(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	var sent []byte
	var asked client.Object
	var kind string
	c := fake.NewClientBuilder().WithObjects(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s"},
		Data: map[string][]byte{"password": []byte("12345678")}}).
		WithInterceptorFuncs(interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			asked, kind = obj, obj.GetObjectKind().GroupVersionKind().Kind
			var err error
			sent, err = patch.Data(obj)
			g.Expect(err).NotTo(HaveOccurred())
			return c.Patch(ctx, obj, patch, opts...)
		}}).Build()
	obj := &corev1.Secret{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "s"}, obj)).To(Succeed())
	read := obj.ResourceVersion
	g.Expect(AddRecording(ctx, c, obj, Domain+"/mine", map[string]string{"record": "first"})).To(Succeed())

	g.Expect(asked).To(BeAssignableToTypeOf(&metav1.PartialObjectMetadata{}), "the metadata is asked for, not the Secret")
	g.Expect(kind).To(Equal("Secret"))
	var patch map[string]any
	g.Expect(json.Unmarshal(sent, &patch)).To(Succeed())
	g.Expect(patch).To(Equal(map[string]any{"metadata": map[string]any{"resourceVersion": read,
		"finalizers": []any{Domain + "/mine"}, "annotations": map[string]any{"record": "first"}}}), "the change and its lock, nothing else")

	got := &corev1.Secret{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "s"}, got)).To(Succeed())
	g.Expect(obj.ResourceVersion).To(Equal(got.ResourceVersion), "the version the write left")
	g.Expect(obj.ResourceVersion).NotTo(Equal(read))
	g.Expect(obj.Finalizers).To(Equal(got.Finalizers))
	g.Expect(obj.Annotations).To(Equal(got.Annotations))
	g.Expect(obj.Data).To(Equal(got.Data))
	g.Expect(got.Data).To(HaveKeyWithValue("password", []byte("12345678")), "the rest of the object is not written")
}

// TestPatchTakesTheAnswer: the object takes the metadata the API server answered, and,
// where the answer shows another generation (the spec changed in the same write), keeps
// the version it was read at, so that the round's next locked write conflicts.
func TestPatchTakesTheAnswer(t *testing.T) {
	for _, tt := range []struct {
		name       string
		generation int64 // added to the answer's
		keepsRead  bool
	}{
		{"the same generation", 0, false},
		{"a spec changed in the same write", 1, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			var sent []byte
			c := fake.NewClientBuilder().WithObjects(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s",
				Generation: 3, Finalizers: []string{"keep/me", Domain + "/mine"}}}).
				WithInterceptorFuncs(interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
					sent, _ = patch.Data(obj)
					if err := c.Patch(ctx, obj, patch, opts...); err != nil {
						return err
					}
					// What another writer's part of the answer stands for: a mutating webhook.
					obj.SetAnnotations(map[string]string{"set-by": "the API server"})
					obj.SetGeneration(obj.GetGeneration() + tt.generation)
					return nil
				}}).Build()
			obj := &corev1.Secret{}
			g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "s"}, obj)).To(Succeed())
			read := obj.ResourceVersion
			g.Expect(Remove(ctx, c, obj, Domain+"/mine")).To(Succeed())
			g.Expect(string(sent)).To(MatchJSON(`{"metadata":{"resourceVersion":"` + read + `","finalizers":["keep/me"]}}`))
			g.Expect(obj.Annotations).To(Equal(map[string]string{"set-by": "the API server"}), "the answer's metadata")
			g.Expect(obj.Finalizers).To(Equal([]string{"keep/me"}))
			g.Expect(obj.Generation).To(Equal(int64(3)), "the generation the rest of obj is")
			stored := &corev1.Secret{}
			g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "s"}, stored)).To(Succeed())
			if tt.keepsRead {
				g.Expect(obj.ResourceVersion).To(Equal(read))
			} else {
				g.Expect(obj.ResourceVersion).To(Equal(stored.ResourceVersion))
			}
		})
	}
}

// TestAddFallsBackToUpdate: where patch is forbidden (openstack-operator's RBAC for
// keystone-operator grants topologies update, not patch), the finalizer is added with
// an update of the object as read.
func TestAddFallsBackToUpdate(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "topology", Namespace: "openstack"}}
	patches, updates := 0, 0
	c := fake.NewClientBuilder().WithObjects(obj).WithInterceptorFuncs(interceptor.Funcs{
		Patch: func(context.Context, client.WithWatch, client.Object, client.Patch, ...client.PatchOption) error {
			patches++
			return apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "topology", errors.New("no patch"))
		},
		Update: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.UpdateOption) error {
			updates++
			return c.Update(ctx, o, opts...)
		},
	}).Build()
	g.Expect(Add(ctx, c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "topology", Namespace: "openstack"}}, "keystone.openstack.org/x")).To(Succeed())
	got := &corev1.ConfigMap{}
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(obj), got)).To(Succeed())
	g.Expect(got.Finalizers).To(Equal([]string{"keystone.openstack.org/x"}))
	g.Expect([]int{patches, updates}).To(Equal([]int{1, 1}))
}

func TestOrphaned(t *testing.T) {
	g := NewWithT(t)
	long := strings.Repeat("l", 80)
	api := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Finalizers: []string{
		"keystone.openstack.org/keystoneapi",
		For("keystoneservice", "glance"), For("keystoneservice", "ghost"), For("keystoneservice", long),
		Upstream("keystoneservice", "nova"), Upstream("keystoneservice", "gone"),
		For("keystoneendpoint", "glance"), "openstack.org/placementapi",
	}}}
	g.Expect(Orphaned(api, "keystoneservice", []string{"glance", "nova", long})).To(Equal(
		[]string{For("keystoneservice", "ghost"), Upstream("keystoneservice", "gone")}), "a long name's digest is recognised")
	g.Expect(Orphaned(api, "keystoneservice", nil)).To(HaveLen(5))
	g.Expect(Orphaned(api, "keystoneendpoint", []string{"glance"})).To(BeEmpty(), "another kind's and foreign finalizers are not this kind's")
}

// On rules that grant update but not patch (openstack-operator's for topologies), the
// finalizer is written with an update and no patch is asked for; with no rules known, a
// refused patch is done again as an update.
func TestAddWithoutPatch(t *testing.T) {
	g := NewWithT(t)
	scheme := runtime.NewScheme()
	g.Expect(topologyv1.AddToScheme(scheme)).To(Succeed())
	topology := &topologyv1.Topology{ObjectMeta: metav1.ObjectMeta{Namespace: "openstack", Name: "default"}}
	mapper := apimeta.NewDefaultRESTMapper(nil)
	mapper.Add(topologyv1.GroupVersion.WithKind("Topology"), apimeta.RESTScopeNamespace)
	var asked []string
	build := func(refusePatch bool) client.Client {
		return fake.NewClientBuilder().WithScheme(scheme).WithRESTMapper(mapper).WithObjects(topology.DeepCopy()).WithInterceptorFuncs(interceptor.Funcs{
			Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
				asked = append(asked, "patch")
				if refusePatch {
					return apierrors.NewForbidden(schema.GroupResource{Group: "topology.openstack.org", Resource: "topologies"}, obj.GetName(), errors.New("no"))
				}
				return c.Patch(ctx, obj, patch, opts...)
			},
			Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
				asked = append(asked, "update")
				return c.Update(ctx, obj, opts...)
			},
		}).Build()
	}
	rules := permissions.Reviewed([]authorizationv1.ResourceRule{{Verbs: []string{"get", "list", "update", "watch"},
		APIGroups: []string{"topology.openstack.org"}, Resources: []string{"topologies"}}})
	c := permissions.Client{Client: build(true), Rules: rules}
	got := &topologyv1.Topology{}
	g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(topology), got)).To(Succeed())
	g.Expect(Add(context.Background(), c, got, "keystone.openstack.org/keystoneapi-keystone")).To(Succeed())
	g.Expect(asked).To(Equal([]string{"update"}), "no patch asked for")
	g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(topology), got)).To(Succeed())
	g.Expect(got.Finalizers).To(Equal([]string{"keystone.openstack.org/keystoneapi-keystone"}))

	asked = nil
	unknown := build(true)
	g.Expect(unknown.Get(context.Background(), client.ObjectKeyFromObject(topology), got)).To(Succeed())
	g.Expect(Add(context.Background(), unknown, got, "keystone.openstack.org/keystoneapi-keystone")).To(Succeed())
	g.Expect(asked).To(Equal([]string{"patch", "update"}), "rules unknown: asked, refused, updated")
}
