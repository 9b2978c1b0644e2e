package reconciler

import (
	"context"
	"testing"

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
