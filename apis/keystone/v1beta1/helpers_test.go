package v1beta1

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func service(generation, observed int64, ready corev1.ConditionStatus, msg string) *KeystoneService {
	return &KeystoneService{
		ObjectMeta: metav1.ObjectMeta{Name: "glance", Namespace: "openstack", Generation: generation},
		Status: KeystoneServiceStatus{ObservedGeneration: observed, ServiceID: "s1",
			Conditions: condition.Conditions{{Type: condition.ReadyCondition, Status: ready, Message: msg}}},
	}
}

func TestIsReady(t *testing.T) {
	tests := []struct {
		name string
		svc  *KeystoneService
		want bool
	}{
		{"ready for the current generation", service(2, 2, corev1.ConditionTrue, ""), true},
		{"ready for an older generation", service(3, 2, corev1.ConditionTrue, ""), false},
		{"not ready", service(2, 2, corev1.ConditionFalse, "x"), false},
		{"no status", &KeystoneService{}, false},
	}
	for _, tt := range tests {
		if got := tt.svc.IsReady(); got != tt.want {
			t.Errorf("%s: IsReady() = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestWaitForKeystoneService(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKey{Namespace: "openstack", Name: "glance"}

	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(service(1, 1, corev1.ConditionTrue, "")).Build()
	svc, err := WaitForKeystoneService(context.Background(), c, key, 10*time.Millisecond)
	if err != nil || svc.Status.ServiceID != "s1" {
		t.Fatalf("ready service: %v, %v", svc, err)
	}

	c = fake.NewClientBuilder().WithScheme(scheme).
		WithObjects(service(1, 1, corev1.ConditionFalse, "KeystoneAPIReady (0/7 ready): no KeystoneAPI in namespace openstack")).Build()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = WaitForKeystoneService(ctx, c, key, 10*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "no KeystoneAPI in namespace openstack") {
		t.Fatalf("a service that is not ready: want the blocking step in the error, got %v", err)
	}
}
