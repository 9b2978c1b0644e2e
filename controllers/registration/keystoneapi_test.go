package registration

import (
	"context"
	"errors"
	"testing"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

func TestMarkKeystoneAPI(t *testing.T) {
	const step lc.Type = "KeystoneAPIReady"
	api := func(generation, observed int64, ready lc.Condition, internal string, deleting bool) *keystonev1.KeystoneAPI {
		a := &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Generation: generation}}
		a.Status.ObservedGeneration = observed
		a.Status.Conditions = lc.Conditions{ready}
		if internal != "" {
			a.Status.APIEndpoints = map[string]string{keystonev1.EndpointInternal: internal}
		}
		if deleting {
			a.DeletionTimestamp = &metav1.Time{Time: time.Now()}
		}
		return a
	}
	ready := lc.Condition{Type: lc.ReadyCondition, Status: corev1.ConditionTrue, Reason: lc.ReadyReason}
	progressing := lc.Condition{Type: lc.ReadyCondition, Status: corev1.ConditionFalse, Reason: "Created",
		Severity: lc.SeverityInfo, Message: "DBSyncReady (8/14 ready): job keystone-db-sync running"}
	failing := lc.Condition{Type: lc.ReadyCondition, Status: corev1.ConditionFalse, Reason: "CreationFailed",
		Severity: lc.SeverityError, Message: "DBSyncReady (8/14 ready): job keystone-db-sync failed after 4 attempts"}
	url := "https://keystone-internal.openstack.svc:5000"
	tests := []struct {
		name   string
		api    *keystonev1.KeystoneAPI
		usable bool
		want   lc.Condition
	}{
		{"none in the namespace", nil, false, lc.Condition{Status: corev1.ConditionFalse, Reason: "DependencyNotFound",
			Severity: lc.SeverityWarning, Message: "no KeystoneAPI in namespace openstack"}},
		{"being deleted", api(1, 1, ready, url, true), false, lc.Condition{Status: corev1.ConditionFalse, Reason: "DependencyNotFound",
			Severity: lc.SeverityWarning, Message: "KeystoneAPI keystone is being deleted"}},
		{"progressing: its progress, not its messages", api(1, 1, progressing, url, false), false, lc.Condition{Status: corev1.ConditionFalse,
			Reason: "Created", Severity: lc.SeverityInfo, Message: "KeystoneAPI keystone is not ready yet"}},
		{"failing: its message", api(1, 1, failing, url, false), false, lc.Condition{Status: corev1.ConditionFalse, Reason: "CreationFailed",
			Severity: lc.SeverityError, Message: "KeystoneAPI keystone: DBSyncReady (8/14 ready): job keystone-db-sync failed after 4 attempts"}},
		{"ready for an older generation", api(2, 1, ready, url, false), false, lc.Condition{Status: corev1.ConditionFalse, Reason: "Requested",
			Severity: lc.SeverityInfo, Message: "KeystoneAPI keystone: waiting for its current generation to be ready"}},
		{"ready without an internal endpoint", api(1, 1, ready, "", false), false, lc.Condition{Status: corev1.ConditionFalse,
			Reason: "Requested", Severity: lc.SeverityInfo, Message: "KeystoneAPI keystone: waiting for its current generation to be ready"}},
		{"ready", api(1, 1, ready, url, false), true, lc.Condition{Status: corev1.ConditionTrue, Reason: lc.ReadyReason,
			Message: "KeystoneAPI keystone is ready"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			round := condition.Steps{step}.Begin(nil, time.Now())
			g.Expect(MarkKeystoneAPI(round, step, "openstack", tt.api)).To(Equal(tt.usable))
			got := round.Get(step)
			g.Expect(lc.Condition{Status: got.Status, Reason: got.Reason, Severity: got.Severity, Message: got.Message}).To(Equal(tt.want))
		})
	}
}

// TestSecretWakes: the admin Secret or the CA bundle of a KeystoneAPI of the namespace
// selects every object of it; another Secret what own selects, none without own; a
// failed list of the KeystoneAPIs every object.
func TestSecretWakes(t *testing.T) {
	g := NewWithT(t)
	scheme := runtime.NewScheme()
	g.Expect(keystonev1.AddToScheme(scheme)).To(Succeed())
	api := &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "keystone"},
		Spec: keystonev1.KeystoneAPISpec{Secret: "admin-secret"}}
	api.Spec.TLS.CaBundleSecretName = "combined-ca-bundle"
	secret := func(ns, name string) client.Object {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	own := func(o client.Object) []client.ListOption {
		return []client.ListOption{client.MatchingFields{"spec.secret": o.GetName()}}
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(api).Build()
	g.Expect(SecretWakes(c, own)(secret("a", "admin-secret"))).To(Equal([]client.ListOption{}), "every object")
	g.Expect(SecretWakes(c, nil)(secret("a", "admin-secret"))).To(Equal([]client.ListOption{}), "every object")
	g.Expect(SecretWakes(c, own)(secret("a", "combined-ca-bundle"))).To(Equal([]client.ListOption{}), "every object")
	g.Expect(SecretWakes(c, own)(secret("a", "glance"))).To(Equal(own(secret("a", "glance"))), "its own readers")
	g.Expect(SecretWakes(c, own)(secret("b", "admin-secret"))).To(Equal(own(secret("b", "admin-secret"))),
		"no KeystoneAPI of that namespace reads it")
	g.Expect(SecretWakes(c, nil)(secret("a", "glance"))).To(BeNil(), "none")

	failing := fake.NewClientBuilder().WithScheme(scheme).WithObjects(api).WithInterceptorFuncs(interceptor.Funcs{
		List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
			return errors.New("cache not synced")
		}}).Build()
	g.Expect(SecretWakes(failing, nil)(secret("a", "glance"))).To(Equal([]client.ListOption{}), "not known: every object")
}
