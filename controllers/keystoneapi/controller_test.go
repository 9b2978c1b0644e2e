package keystoneapi

import (
	"testing"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestAppliedSteps(t *testing.T) {
	tlsOn := func(a *keystonev1.KeystoneAPI) {
		a.Spec.TLS.API.Internal.SecretName = ptr.To("cert-keystone-internal-svc")
	}
	tests := []struct {
		name   string
		mutate []func(*keystonev1.KeystoneAPI)
		want   []lc.Type
	}{
		{"the default spec: no TLS, topology or networks, and no endpoint check", nil, []lc.Type{
			"InputReady", "ServiceAccountReady", "DBReady", "MemcachedReady", "RabbitMqTransportURLReady", "ServiceConfigReady",
			"FernetKeysReady", "DBSyncReady", "ExposeServiceReady", "BootstrapReady", "DeploymentReady", "PDBReady", "CronJobReady",
			"OpenStackConfigReady"}},
		{"with TLS, a topology and a network", []func(*keystonev1.KeystoneAPI){tlsOn,
			func(a *keystonev1.KeystoneAPI) { a.Spec.TopologyRef = &keystonev1.TopoRef{Name: "t"} },
			func(a *keystonev1.KeystoneAPI) { a.Spec.NetworkAttachments = []string{"internalapi"} }}, nil},
		{"external mode", []func(*keystonev1.KeystoneAPI){func(a *keystonev1.KeystoneAPI) { a.Spec.ExternalKeystoneAPI = true }},
			[]lc.Type{"InputReady", "KeystoneEndpointReady", "OpenStackConfigReady"}},
		{"external mode with a CA bundle", []func(*keystonev1.KeystoneAPI){tlsOn, func(a *keystonev1.KeystoneAPI) {
			a.Spec.ExternalKeystoneAPI = true
			a.Spec.TLS.CaBundleSecretName = "combined-ca-bundle"
		}}, []lc.Type{"InputReady", "TLSInputReady", "KeystoneEndpointReady", "OpenStackConfigReady"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := &keystonev1.KeystoneAPI{}
			for _, m := range tt.mutate {
				m(api)
			}
			want := tt.want
			if len(want) == 0 {
				// Every step but the endpoint check, which the deployment's readiness is.
				for _, s := range keystonev1.KeystoneAPISteps {
					if s != keystonev1.KeystoneAPIEndpointReady {
						want = append(want, s)
					}
				}
			}
			NewWithT(t).Expect([]lc.Type(appliedSteps(api))).To(Equal(want))
		})
	}
}

func TestFernetScheduleOf(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	secret := func(annotations map[string]string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Annotations: annotations}}
	}
	tests := []struct {
		name                     string
		annotations              map[string]string
		rotate, malformed, stale bool
		due                      time.Time
	}{
		{"rotated an hour ago", map[string]string{deploy.RotatedAtAnnotation: now.Add(-time.Hour).Format(time.RFC3339)},
			false, false, false, now.Add(23 * time.Hour)},
		{"due", map[string]string{deploy.RotatedAtAnnotation: now.Add(-24 * time.Hour).Format(time.RFC3339)},
			true, false, false, now},
		{"under its former name: read, and written back", map[string]string{deploy.LegacyRotatedAtAnnotation: now.Add(-25 * time.Hour).Format(time.RFC3339)},
			true, false, true, now.Add(-time.Hour)},
		{"none (the adoption procedure's Secret): rotated now", nil, false, false, true, now.Add(24 * time.Hour)},
		{"malformed: rotated now, and written back, as keystone-operator does", map[string]string{deploy.RotatedAtAnnotation: "yesterday"},
			false, true, true, now.Add(24 * time.Hour)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			sched := fernetScheduleOf(secret(tt.annotations), 1, now)
			g.Expect([]bool{sched.rotate, sched.malformed, sched.stale}).To(Equal([]bool{tt.rotate, tt.malformed, tt.stale}))
			g.Expect(sched.due).To(Equal(tt.due))
		})
	}
}
