package handback_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/keystone-stepwise/keystone-operator/cmd/manager"
	"github.com/keystone-stepwise/keystone-operator/internal/handback"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

const ns = "openstack"

// object is a namespace's object of kind (a key of kindsOf) with finalizers, annotations
// and a spec.
func object(kind, name string, finalizers []string, annotations map[string]string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(schema.FromAPIVersionAndKind(kindsOf[kind], kind))
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetFinalizers(finalizers)
	u.SetAnnotations(annotations)
	if spec != nil {
		u.Object["spec"] = spec
	}
	return u
}

// asThisSuiteLeavesThem is a namespace this suite ran: a KeystoneAPI with placement's
// KeystoneService, KeystoneEndpoint and application credential, the credential's
// Secret (held by placement too), the cleanup Secret, the MariaDB objects, the
// Memcached and the Topology it used, and a KeystoneService being deleted. placement's
// operator holds its objects with openstack.org/placementapi.
func asThisSuiteLeavesThem() []client.Object {
	return []client.Object{
		object("KeystoneAPI", "keystone", []string{"keystone.openstack.org/keystoneapi",
			"keystone.openstack.org/keystoneservice-placement", "keystone.openstack.org/keystoneservice-old",
			"keystone.openstack.org/keystoneapplicationcredential-ac-placement"}, nil, map[string]any{"adminUser": "admin"}),
		object("KeystoneService", "placement", []string{"openstack.org/placementapi", "keystone.openstack.org/keystoneservice",
			"keystone.openstack.org/keystoneendpoint-placement"}, map[string]string{"keystone.openstack.org/service-user": "placement",
			"kept": "yes"}, map[string]any{"serviceName": "placement"}),
		object("KeystoneEndpoint", "placement", []string{"openstack.org/placementapi", "keystone.openstack.org/keystoneendpoint"},
			nil, map[string]any{"serviceName": "placement"}),
		object("KeystoneApplicationCredential", "ac-placement", []string{"keystone.openstack.org/keystoneapplicationcredential"},
			nil, map[string]any{"userName": "placement"}),
		object("Secret", "ac-placement-secret-x2k9p", []string{"keystone.openstack.org/ac-secret-protection",
			"openstack.org/placement-ac-consumer"}, map[string]string{"keystone.openstack.org/user-id": "u1"}, nil),
		object("Secret", "keystone-cleanup", []string{"keystone.openstack.org/keystoneapi"}, nil, nil),
		object("Secret", "osp-secret", nil, nil, nil),
		object("Memcached", "memcached", []string{"keystone.openstack.org/keystoneapi-keystone"}, nil, nil),
		object("MariaDBDatabase", "keystone", []string{"keystone.openstack.org/keystoneapi-keystone"}, nil, nil),
		object("MariaDBAccount", "keystone", []string{"keystone.openstack.org/keystoneapi-keystone"}, nil, nil),
		object("Topology", "default", []string{"keystone.openstack.org/keystoneapi-keystone", "openstack.org/glanceapi-glance"}, nil, nil),
		func() client.Object {
			old := object("KeystoneService", "old", []string{"keystone.openstack.org/keystoneservice"}, nil,
				map[string]any{"serviceName": "old"})
			old.SetDeletionTimestamp(&metav1.Time{Time: time.Now()})
			return old
		}(),
	}
}

// asKeystoneOperatorLeavesThem is the layout keystone-operator's controllers keep
// (internal/controller at c9c3dbc): the KeystoneAPI's openstack.org/keystoneapi and a
// finalizer per KeystoneService and KeystoneEndpoint on it (keystoneservice_controller.go,
// keystoneendpoint_controller.go), each registration's own, an endpoint's on its
// KeystoneService, the credential's openstack.org/applicationcredential and its
// Secret's openstack.org/ac-secret-protection, openstack.org/keystoneapi on the
// Memcached (keystoneapi_controller.go) and the MariaDB objects (lib-common's database
// helpers), and lib-common's "<finalizer>-<name>" on the Topology.
var asKeystoneOperatorLeavesThem = map[string][]string{
	"KeystoneAPI/keystone": {"openstack.org/keystoneapi", "openstack.org/keystoneservice-placement",
		"openstack.org/keystoneendpoint-placement"},
	"KeystoneService/placement":                  {"openstack.org/placementapi", "openstack.org/keystoneservice", "openstack.org/keystoneendpoint-placement"},
	"KeystoneEndpoint/placement":                 {"openstack.org/placementapi", "openstack.org/keystoneendpoint"},
	"KeystoneApplicationCredential/ac-placement": {"openstack.org/applicationcredential"},
	"Secret/ac-placement-secret-x2k9p":           {"openstack.org/placement-ac-consumer", "openstack.org/ac-secret-protection"},
	"Secret/keystone-cleanup":                    nil,
	"Secret/osp-secret":                          nil,
	"Memcached/memcached":                        {"openstack.org/keystoneapi"},
	"MariaDBDatabase/keystone":                   {"openstack.org/keystoneapi"},
	"MariaDBAccount/keystone":                    {"openstack.org/keystoneapi"},
	"Topology/default":                           {"openstack.org/glanceapi-glance", "openstack.org/keystoneapi-keystone"},
}

func TestHandBack(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	c := fake.NewClientBuilder().WithScheme(manager.Scheme).WithObjects(asThisSuiteLeavesThem()...).Build()

	changes, err := handback.Plan(ctx, c, ns)
	g.Expect(err).NotTo(HaveOccurred())
	var said []string
	for _, ch := range changes {
		said = append(said, ch.String())
	}
	g.Expect(said).To(ContainElements(
		"KeystoneService/placement: remove finalizers keystone.openstack.org/keystoneservice, keystone.openstack.org/keystoneendpoint-placement; "+
			"add keystone-operator's openstack.org/keystoneservice, openstack.org/keystoneendpoint-placement; drop annotations keystone.openstack.org/service-user",
		"KeystoneService/old: remove finalizers keystone.openstack.org/keystoneservice",
		"Secret/keystone-cleanup: remove finalizers keystone.openstack.org/keystoneapi",
	))
	g.Expect(said).NotTo(ContainElement(HavePrefix("Secret/osp-secret")), "an object of nobody's is not touched")

	// A plan changes nothing.
	for key, want := range asKeystoneOperatorLeavesThem {
		if strings.HasPrefix(key, "Secret/osp") {
			continue
		}
		g.Expect(finalizersOf(g, c, key)).NotTo(Equal(want), "%s before the hand-back", key)
	}

	g.Expect(handback.Apply(ctx, c, changes)).To(Succeed())
	for key, want := range asKeystoneOperatorLeavesThem {
		got := finalizersOf(g, c, key)
		if want == nil {
			g.Expect(got).To(BeEmpty(), key)
			continue
		}
		g.Expect(got).To(ConsistOf(want), key)
	}
	svc := get(g, c, "KeystoneService/placement")
	g.Expect(svc.GetAnnotations()).To(Equal(map[string]string{"kept": "yes"}), "only this suite's annotation goes")
	g.Expect(get(g, c, "Secret/ac-placement-secret-x2k9p").GetAnnotations()).To(BeEmpty())
	old := &unstructured.Unstructured{}
	old.SetGroupVersionKind(schema.FromAPIVersionAndKind("keystone.openstack.org/v1beta1", "KeystoneService"))
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "old"}, old)).NotTo(Succeed(), "the deletion it held completes")

	again, err := handback.Plan(ctx, c, ns)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again).To(BeEmpty(), "handed back: nothing left to do")
}

// kindsOf maps a "<Kind>/<name>" key to its apiVersion.
var kindsOf = map[string]string{
	"KeystoneAPI": "keystone.openstack.org/v1beta1", "KeystoneService": "keystone.openstack.org/v1beta1",
	"KeystoneEndpoint": "keystone.openstack.org/v1beta1", "KeystoneApplicationCredential": "keystone.openstack.org/v1beta1",
	"Secret": "v1", "Memcached": "memcached.openstack.org/v1beta1", "MariaDBDatabase": "mariadb.openstack.org/v1beta1",
	"MariaDBAccount": "mariadb.openstack.org/v1beta1", "Topology": "topology.openstack.org/v1beta1",
}

func get(g Gomega, c client.Client, key string) *unstructured.Unstructured {
	kind, name, _ := strings.Cut(key, "/")
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.FromAPIVersionAndKind(kindsOf[kind], kind))
	g.Expect(c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, u)).To(Succeed(), key)
	return u
}

func finalizersOf(g Gomega, c client.Client, key string) []string {
	return get(g, c, key).GetFinalizers()
}
