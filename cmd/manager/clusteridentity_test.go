package manager

import (
	"context"
	"errors"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"os"
	"testing"

	"github.com/keystone-stepwise/keystone-operator/internal/permissions"
	"github.com/keystone-stepwise/keystone-operator/tests/support/openstackrbac"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

var kubeSystem = &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: metav1.NamespaceSystem, UID: "cluster-a"}}

// recording is a fake API server holding objs that records what is asked of it, and
// answers gets of namespaces (and only them) with getErrs while there are some left.
type recording struct {
	client.Client
	asked []string
}

func newRecording(getErrs []error, objs ...client.Object) *recording {
	r := &recording{}
	r.Client = fake.NewClientBuilder().WithObjects(objs...).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			_, namespace := obj.(*corev1.Namespace)
			r.asked = append(r.asked, "get "+kindOf(obj)+" "+key.String())
			if namespace && len(getErrs) > 0 {
				err := getErrs[0]
				getErrs = getErrs[1:]
				return err
			}
			return c.Get(ctx, key, obj, opts...)
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			r.asked = append(r.asked, "create "+kindOf(obj)+" "+client.ObjectKeyFromObject(obj).String())
			return c.Create(ctx, obj, opts...)
		},
	}).Build()
	return r
}

func kindOf(obj client.Object) string {
	if _, ok := obj.(*corev1.Namespace); ok {
		return "namespace"
	}
	return "configmap"
}

func (r *recording) source(namespace string, rules permissions.Rules) IdentitySource {
	return IdentitySource{Reader: r, Writer: r, Namespace: namespace, Rules: rules}
}

// openstackOperatorRules are the rules openstack-operator gives keystone-operator.
func openstackOperatorRules() permissions.Rules { return asReviewed(openstackrbac.Rules()) }

func TestClusterIdentity(t *testing.T) {
	ctx := context.Background()
	all := permissions.Rules{}
	identityCM := func(id string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "operators", Name: identity.ClusterConfigMap}, Data: map[string]string{identity.ClusterKey: id}}
	}

	t.Run("kept: the ConfigMap's, nothing else asked", func(t *testing.T) {
		g := NewWithT(t)
		r := newRecording(nil, kubeSystem, identityCM("kept-id"))
		g.Expect(ClusterIdentity(ctx, r.source("operators", all))).To(Equal("kept-id"))
		g.Expect(r.asked).To(Equal([]string{"get configmap operators/" + identity.ClusterConfigMap}))
	})

	t.Run("made from kube-system's UID where readable: earlier versions' marks stay this cluster's", func(t *testing.T) {
		g := NewWithT(t)
		r := newRecording(nil, kubeSystem)
		g.Expect(ClusterIdentity(ctx, r.source("operators", all))).To(Equal("cluster-a"))
		cm := &corev1.ConfigMap{}
		g.Expect(r.Get(ctx, client.ObjectKey{Namespace: "operators", Name: identity.ClusterConfigMap}, cm)).To(Succeed())
		g.Expect(cm.Data).To(Equal(map[string]string{identity.ClusterKey: "cluster-a"}))
	})

	t.Run("on openstack-operator's RBAC: a new identity, kept, and kube-system never asked", func(t *testing.T) {
		g := NewWithT(t)
		r := newRecording(nil, kubeSystem)
		first := ClusterIdentity(ctx, r.source("operators", openstackOperatorRules()))
		g.Expect(first).NotTo(BeEmpty())
		g.Expect(first).NotTo(Equal("cluster-a"))
		g.Expect(ClusterIdentity(ctx, r.source("operators", openstackOperatorRules()))).To(Equal(first), "the same after a restart")
		g.Expect(r.asked).NotTo(ContainElement(ContainSubstring("namespace")))
	})

	t.Run("made meanwhile by another replica: that one", func(t *testing.T) {
		g := NewWithT(t)
		r := newRecording(nil, kubeSystem)
		// The first read finds nothing; the other replica creates it before this one does.
		raced := &raceClient{recording: r, made: identityCM("other-replica")}
		g.Expect(ClusterIdentity(ctx, IdentitySource{Reader: raced, Writer: raced, Namespace: "operators", Rules: all})).To(Equal("other-replica"))
	})

	t.Run("outside a cluster, no namespace: kube-system's UID, nothing made", func(t *testing.T) {
		g := NewWithT(t)
		r := newRecording(nil, kubeSystem)
		g.Expect(ClusterIdentity(ctx, r.source("", all))).To(Equal("cluster-a"))
		g.Expect(r.asked).To(Equal([]string{"get namespace /kube-system"}))
	})

	t.Run("nothing readable nor makeable: unknown", func(t *testing.T) {
		g := NewWithT(t)
		r := newRecording(nil, kubeSystem)
		none := permissions.Reviewed(nil)
		g.Expect(ClusterIdentity(ctx, r.source("operators", none))).To(BeEmpty())
		g.Expect(r.asked).To(BeEmpty(), "nothing asked that would be refused")
	})

	t.Run("a read that fails for a moment is tried again; a refusal is final", func(t *testing.T) {
		g := NewWithT(t)
		r := newRecording([]error{errors.New("the server is currently unable to handle the request")}, kubeSystem)
		g.Expect(ClusterIdentity(ctx, r.source("", all))).To(Equal("cluster-a"), "tried again")
		g.Expect(r.asked).To(HaveLen(2))
		refused := apierrors.NewForbidden(schema.GroupResource{Resource: "namespaces"}, "kube-system", errors.New("no"))
		r = newRecording([]error{refused, refused, refused}, kubeSystem)
		g.Expect(ClusterIdentity(ctx, r.source("", all))).To(BeEmpty())
		g.Expect(r.asked).To(HaveLen(1), "a refusal is final")
	})
}

// raceClient is recording where the ConfigMap made appears between the first read and
// the create.
type raceClient struct {
	*recording
	made  client.Object
	reads int
}

func (c *raceClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.reads++
	if _, ok := obj.(*corev1.ConfigMap); ok && c.reads == 1 {
		err := c.recording.Get(ctx, key, obj, opts...)
		if createErr := c.Create(ctx, c.made); createErr != nil {
			return createErr
		}
		return err
	}
	return c.recording.Get(ctx, key, obj, opts...)
}

func TestOperatorNamespace(t *testing.T) {
	g := NewWithT(t)
	g.Expect(operatorNamespace(Options{LeaderElectionNamespace: "lease-ns"})).To(Equal("lease-ns"))
	saved := serviceAccountNamespace
	t.Cleanup(func() { serviceAccountNamespace = saved })
	serviceAccountNamespace = t.TempDir() + "/namespace"
	g.Expect(operatorNamespace(Options{})).To(BeEmpty(), "outside a cluster")
	g.Expect(writeFile(serviceAccountNamespace, "openstack-operators\n")).To(Succeed())
	g.Expect(operatorNamespace(Options{})).To(Equal("openstack-operators"), "the pod's")
}

func writeFile(path, content string) error { return os.WriteFile(path, []byte(content), 0o600) }
