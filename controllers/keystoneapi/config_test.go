package keystoneapi

import (
	"errors"
	"testing"

	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
)

func TestConfigVerdict(t *testing.T) {
	bad := &inputProblem{condition.InvalidInput, "federatedRealmConfig: bad"}
	tests := []struct {
		name string
		c    configFound
		want verdictOf
	}{
		{"rendered", configFound{secret: "keystone-config-data"}, verdictOf{true, "", "",
			"configuration rendered into secret keystone-config-data"}},
		{"observed while an earlier step waits", configFound{secret: "keystone-config-data", waiting: "(updated once DBReady is True)"},
			verdictOf{true, "", "", "configuration in secret keystone-config-data as rendered before (updated once DBReady is True)"}},
		{"custom configuration missing", configFound{secret: "c", missingCustom: "httpd-custom"}, verdictOf{false, "DependencyNotFound",
			lc.SeverityWarning, "httpdCustomization.customConfigSecret httpd-custom not found"}},
		{"federation's problem", configFound{secret: "c", federation: bad}, verdictOf{false, "InvalidInput", lc.SeverityError,
			"federatedRealmConfig: bad"}},
		{"rendering failed", configFound{secret: "c", renderErr: errors.New("template: boom")}, verdictOf{false, "CreationFailed",
			lc.SeverityError, "rendering the configuration: template: boom"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(brief(configVerdict(tt.c))).To(Equal(tt.want))
			g.Expect(tt.c.renderable()).To(Equal(tt.c.missingCustom == "" && tt.c.federation == nil))
		})
	}
}

func TestFederationFilesOf(t *testing.T) {
	g := NewWithT(t)
	secret := func(content string) *corev1.Secret {
		return &corev1.Secret{Data: map[string][]byte{FederationConfigKey: []byte(content)}}
	}
	_, problem := federationFilesOf("realms", nil)
	g.Expect(*problem).To(Equal(inputProblem{condition.DependencyNotFound, "federatedRealmConfig: secret realms not found"}))
	_, problem = federationFilesOf("realms", &corev1.Secret{})
	g.Expect(*problem).To(Equal(inputProblem{condition.DependencyNotFound,
		"federatedRealmConfig: secret realms has no key federation-config.json"}))
	_, problem = federationFilesOf("realms", secret("[1]"))
	g.Expect(problem.reason).To(Equal(condition.InvalidInput))
	g.Expect(problem.message).To(HavePrefix("federatedRealmConfig: key federation-config.json of secret realms is not a JSON object of file names: "))
	files, problem := federationFilesOf("realms", secret(`{"idp.conf": {"a": 1}}`))
	g.Expect(problem).To(BeNil())
	g.Expect(files).To(Equal(map[string]string{"idp.conf": `{"a": 1}`}))
}
