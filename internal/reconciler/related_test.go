package reconciler

import (
	"context"
	"testing"

	"github.com/keystone-stepwise/keystone-operator/internal/permissions"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestRelated(t *testing.T) {
	g := NewWithT(t)
	named := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: "ns", Name: name} }
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "keys", UID: "u-keys"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "config", UID: "u-config"}},
	).Build()
	refs, err := Related(context.Background(), c,
		&corev1.ConfigMap{ObjectMeta: named("config")},
		&corev1.Secret{ObjectMeta: named("missing")},
		&corev1.Secret{ObjectMeta: named("keys")},
		&corev1.Secret{ObjectMeta: named("")},
		&corev1.Secret{ObjectMeta: named("keys")},
	)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(refs).To(Equal([]corev1.ObjectReference{
		{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "config", UID: "u-config"},
		{APIVersion: "v1", Kind: "Secret", Namespace: "ns", Name: "keys", UID: "u-keys"},
	}), "those that exist, in the order given, once each, with no resourceVersion")
	_, err = Related(context.Background(), c, &unregistered{corev1.ConfigMap{ObjectMeta: named("x")}})
	g.Expect(err).To(HaveOccurred(), "a kind the scheme lacks")
}

// unregistered is a kind no scheme knows.
type unregistered struct{ corev1.ConfigMap }

var _ client.Object = &unregistered{}

// TestRelatedListsWhatTheRoundCreated: an object a round created through a
// RecordingClient is listed with its UID though the reader (a cache behind the
// creation) does not have it yet; one created in another round's context is not.
func TestRelatedListsWhatTheRoundCreated(t *testing.T) {
	g := NewWithT(t)
	api := fake.NewClientBuilder().WithScheme(scheme.Scheme).Build()
	cache := fake.NewClientBuilder().WithScheme(scheme.Scheme).Build() // sees nothing yet
	ctx := withCreated(context.Background())
	// The fake API server keeps the UID it is given; a real one sets it.
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "new", UID: "u-new"}}
	g.Expect(RecordingClient{Client: api}.Create(ctx, secret)).To(Succeed())
	refs, err := Related(ctx, cache, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "new"}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(refs).To(Equal([]corev1.ObjectReference{{APIVersion: "v1", Kind: "Secret", Namespace: "ns", Name: "new", UID: secret.UID}}))

	refs, err = Related(withCreated(context.Background()), cache, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "new"}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(refs).To(BeEmpty(), "another round's creation is the cache's to show")
}

// TestRecordingClientKeepsPermissions: wrapping a client that knows its permissions
// keeps them known (permissions.AllowsOn, permissions.Allows), so a write it may not make
// is not tried.
func TestRecordingClientKeepsPermissions(t *testing.T) {
	g := NewWithT(t)
	var wrapped client.Client = RecordingClient{Client: refusing{fake.NewClientBuilder().WithScheme(scheme.Scheme).Build()}}
	g.Expect(permissions.AllowsOn(wrapped, "patch", &corev1.Secret{})).To(BeFalse())
	g.Expect(permissions.Allows(wrapped, "use", "security.openshift.io", "securitycontextconstraints", "nonroot-v2")).To(BeFalse())
}

// refusing is a client that may do nothing.
type refusing struct{ client.Client }

func (refusing) AllowsOn(string, client.Object) bool { return false }

func (refusing) Allows(string, string, string, ...string) bool { return false }

// TestRelatedLeavesOutWhatTheRoundDeleted: an object a round deleted through a
// RecordingClient is not listed though the reader (a cache behind the deletion) still
// has it.
func TestRelatedLeavesOutWhatTheRoundDeleted(t *testing.T) {
	g := NewWithT(t)
	job := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "done", UID: "u-done"}}
	api := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(job.DeepCopy()).Build()
	cache := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(job.DeepCopy()).Build() // still has it
	ctx := withCreated(context.Background())
	g.Expect(RecordingClient{Client: api}.Delete(ctx, job.DeepCopy())).To(Succeed())
	refs, err := Related(ctx, cache, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "done"}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(refs).To(BeEmpty())
	refs, err = Related(withCreated(context.Background()), cache, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "done"}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(refs).To(HaveLen(1), "another round lists what the cache has")
}
