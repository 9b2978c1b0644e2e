package keystoneapplicationcredential

import (
	"context"
	"strings"
	"testing"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	oksecret "github.com/openstack-k8s-operators/lib-common/modules/common/secret"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// nodeSet is a NodeSet of namespace ns that deployed the Secrets of hashes.
func nodeSet(name string, hashes map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(nodeSetGVK)
	u.SetNamespace("ns")
	u.SetName(name)
	values := map[string]any{}
	for k, v := range hashes {
		values[k] = v
	}
	if err := unstructured.SetNestedMap(u.Object, values, "status", "secretHashes"); err != nil {
		panic(err)
	}
	return u
}

// dataPlane is a client of a cluster with the NodeSet kind (when served) and objs.
func dataPlane(t *testing.T, served bool, objs ...client.Object) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	mapper := apimeta.NewDefaultRESTMapper([]schema.GroupVersion{corev1.SchemeGroupVersion})
	mapper.Add(corev1.SchemeGroupVersion.WithKind("Secret"), apimeta.RESTScopeNamespace)
	if served {
		mapper.Add(nodeSetGVK, apimeta.RESTScopeNamespace)
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithRESTMapper(mapper).WithObjects(objs...).Build()
}

// TestNodeSetsInSync: lib-common's judgement (AreSecretHashesInSync), a Secret a NodeSet
// deployed that no longer exists included, a NodeSet being deleted too.
func TestNodeSetsInSync(t *testing.T) {
	ctx := context.Background()
	config := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "nova-compute-config"},
		Data: map[string][]byte{"nova.conf": []byte("[DEFAULT]")}}
	hash, err := oksecret.Hash(config)
	if err != nil {
		t.Fatal(err)
	}
	deleting := nodeSet("leaving", map[string]string{"gone": "x"})
	now := metav1.Now()
	deleting.SetDeletionTimestamp(&now)
	deleting.SetFinalizers([]string{"test/hold"})
	for _, c := range []struct {
		name   string
		served bool
		objs   []client.Object
		want   string // "" in sync, else a part of why
	}{
		{"no NodeSet kind", false, nil, ""},
		{"deployed as it is now", true, []client.Object{config, nodeSet("compute", map[string]string{"nova-compute-config": hash})}, ""},
		{"changed since", true, []client.Object{config, nodeSet("compute", map[string]string{"nova-compute-config": "old"})},
			"NodeSet compute has not deployed secret nova-compute-config as it is now"},
		{"deployed, then gone", true, []client.Object{config, nodeSet("compute", map[string]string{"nova-compute-config": hash,
			"nova-compute-config-old": "old"})}, "NodeSet compute deployed secret nova-compute-config-old, which no longer exists"},
		{"a NodeSet being deleted", true, []client.Object{config, deleting},
			"NodeSet leaving deployed secret gone, which no longer exists"},
	} {
		t.Run(c.name, func(t *testing.T) {
			inSync, why, err := nodeSetsInSync(ctx, dataPlane(t, c.served, c.objs...), "ns")
			switch {
			case err != nil:
				t.Fatal(err)
			case c.want == "" && (!inSync || why != ""):
				t.Errorf("not in sync: %s", why)
			case c.want != "" && (inSync || !strings.Contains(why, c.want)):
				t.Errorf("in sync %v, why %q; want %q", inSync, why, c.want)
			}
		})
	}
}

// TestDataPlaneLagWithoutWatch: a NodeSet kind the set-up did not find (installed after
// the operator started) is judged all the same, as keystone-operator judges it at each
// call; a credential not deployed to the data plane waits for nothing.
func TestDataPlaneLagWithoutWatch(t *testing.T) {
	r := &Reconciler{NodeSets: false}
	r.Client = dataPlane(t, true, nodeSet("compute", map[string]string{"gone": "x"}))
	ac := &keystonev1.KeystoneApplicationCredential{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "glance"}}
	why, err := r.dataPlaneLag(context.Background(), ac)
	if err != nil || !strings.HasPrefix(why, "waiting for the data plane: NodeSet compute deployed secret gone") {
		t.Errorf("why %q, err %v", why, err)
	}
	ac.Annotations = map[string]string{keystonev1.EDPMServiceAnnotation: "false"}
	if why, err := r.dataPlaneLag(context.Background(), ac); why != "" || err != nil {
		t.Errorf("not a data plane service: why %q, err %v", why, err)
	}
}
