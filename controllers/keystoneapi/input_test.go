package keystoneapi

import (
	"strings"
	"testing"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestInputVerdicts(t *testing.T) {
	api := func(mutate ...func(*keystonev1.KeystoneAPI)) *keystonev1.KeystoneAPI {
		a := &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Namespace: "openstack", UID: "u1"},
			Spec: keystonev1.KeystoneAPISpec{ContainerImage: "keystone", Secret: "osp-secret", DatabaseInstance: "openstack"}}
		a.Spec.PasswordSelectors.Admin = "AdminPassword"
		for _, m := range mutate {
			m(a)
		}
		return a
	}
	other := api(func(a *keystonev1.KeystoneAPI) { a.Name, a.UID = "keystone-old", "u0" })
	tests := []struct {
		name    string
		api     *keystonev1.KeystoneAPI
		first   *keystonev1.KeystoneAPI
		refused bool
		want    verdictOf
	}{
		{"the namespace's first: on to the password", api(), api(), false, verdictOf{}},
		{"a second KeystoneAPI of the namespace", api(), other, true, verdictOf{false, "InvalidInput", lc.SeverityError,
			"KeystoneAPI keystone-old already deploys Keystone in namespace openstack; one KeystoneAPI per namespace: delete this one"}},
		{"a name too long for the trust flush CronJob", api(func(a *keystonev1.KeystoneAPI) { a.Name = strings.Repeat("k", deploy.MaxNameLength+1) }),
			nil, true, verdictOf{false, "InvalidInput", lc.SeverityError, ""}},
		{"openstack-operator's endpoint without a host yet", api(func(a *keystonev1.KeystoneAPI) {
			a.Spec.Override.Service = &keystonev1.ServiceOverrides{Public: &keystonev1.EndpointOverride{EndpointURL: ptr.To("http://")}}
		}), nil, true, verdictOf{false, "Requested", lc.SeverityInfo,
			`waiting for a host in override.service.public.endpointURL "http://" (openstack-operator sets it once its Route has one)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			v, refused := inputGate(tt.api, tt.first)
			g.Expect(refused).To(Equal(tt.refused))
			got := brief(v)
			if tt.want.Message == "" && got.Message != "" {
				got.Message = "" // SpecProblems words it; its own tests say how
			}
			g.Expect(got).To(Equal(tt.want))
		})
	}
	g := NewWithT(t)
	g.Expect(brief(passwordVerdict(api(), false))).To(Equal(verdictOf{false, "DependencyNotFound", lc.SeverityWarning,
		"secret osp-secret with key AdminPassword not found"}))
	g.Expect(brief(passwordVerdict(api(), true))).To(Equal(verdictOf{true, "", "", "admin password found in secret osp-secret"}))
}
