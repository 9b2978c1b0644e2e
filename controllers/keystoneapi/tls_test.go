package keystoneapi

import (
	"testing"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/tests/support/testutil"
	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func TestTLSVerdict(t *testing.T) {
	g := NewWithT(t)
	ca, err := testutil.NewCA("test-ca")
	g.Expect(err).NotTo(HaveOccurred())
	certPEM, keyPEM, err := ca.Issue("keystone-public.openstack.svc")
	g.Expect(err).NotTo(HaveOccurred())
	_, otherKey, err := ca.Issue("other")
	g.Expect(err).NotTo(HaveOccurred())
	cert, err := deploy.ParseKeyPair(certPEM, keyPEM)
	g.Expect(err).NotTo(HaveOccurred())
	until := cert.NotAfter.UTC().Format("2006-01-02")

	api := func(caBundle string, public, internal *string, external bool) *keystonev1.KeystoneAPI {
		a := &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Namespace: "openstack"}}
		a.Spec.TLS.CaBundleSecretName, a.Spec.ExternalKeystoneAPI = caBundle, external
		a.Spec.TLS.API.Public.SecretName, a.Spec.TLS.API.Internal.SecretName = public, internal
		return a
	}
	secret := func(name string, data map[string]string) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, UID: "uid-" + types.UID(name), ResourceVersion: "1"},
			Data: map[string][]byte{}}
		for k, v := range data {
			s.Data[k] = []byte(v)
		}
		return s
	}
	bundle := secret("ca", map[string]string{"tls-ca-bundle.pem": string(ca.PEM)})
	pair := func(name string) *corev1.Secret {
		return secret(name, map[string]string{"tls.crt": string(certPEM), "tls.key": string(keyPEM)})
	}
	all := func(s ...*corev1.Secret) map[string]*corev1.Secret {
		m := map[string]*corev1.Secret{}
		for _, x := range s {
			m[x.Name] = x
		}
		return m
	}
	both := api("ca", ptr.To("pub"), ptr.To("int"), false)
	tests := []struct {
		name    string
		api     *keystonev1.KeystoneAPI
		secrets map[string]*corev1.Secret
		want    verdictOf
		ca      bool // the CA bundle handed on
	}{
		{"no TLS", api("", nil, nil, false), nil, verdictOf{true, "", "", ""}, false},
		{"CA bundle missing", both, nil, verdictOf{false, "DependencyNotFound", lc.SeverityWarning, "secret ca not found"}, false},
		{"CA bundle without its key", both, all(secret("ca", nil)), verdictOf{false, "DependencyNotFound", lc.SeverityWarning,
			"secret ca has no key tls-ca-bundle.pem"}, false},
		{"CA bundle not PEM", both, all(secret("ca", map[string]string{"tls-ca-bundle.pem": "junk"})), verdictOf{false,
			"InvalidCertificate", lc.SeverityWarning, "CA bundle secret ca, key tls-ca-bundle.pem: no PEM certificate"}, false},
		{"one interface alone", api("ca", ptr.To("pub"), nil, false), all(bundle, pair("pub")), verdictOf{false, "InvalidInput",
			lc.SeverityError, "tls.api.public.secretName and tls.api.internal.secretName: both interfaces are served on port 5000, " +
				"so both need a certificate or neither"}, true},
		{"an interface's Secret missing", both, all(bundle, pair("pub")), verdictOf{false, "DependencyNotFound", lc.SeverityWarning,
			"secret int not found"}, true},
		{"a key that does not match", both, all(bundle, pair("pub"), secret("int", map[string]string{"tls.crt": string(certPEM),
			"tls.key": string(otherKey)})), verdictOf{false, "InvalidCertificate", lc.SeverityWarning,
			"certificate secret int of the internal interface: tls: private key does not match public key"}, true},
		{"all valid", both, all(bundle, pair("pub"), pair("int")), verdictOf{true, "", "",
			"CA bundle ca (1 certificates), public certificate pub (valid until " + until + "), internal certificate int (valid until " + until + ")"}, true},
		{"external mode: the CA bundle alone", api("ca", ptr.To("pub"), nil, true), all(bundle), verdictOf{true, "", "",
			"CA bundle ca (1 certificates)"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			v, in := tlsVerdict(tt.api, tt.secrets)
			g.Expect(brief(v)).To(Equal(tt.want))
			g.Expect(in.caBundle != nil).To(Equal(tt.ca))
			if v.True {
				g.Expect(in.revision).NotTo(BeEmpty(), "the revision the pods roll on")
			} else {
				g.Expect(in.revision).To(BeEmpty())
			}
		})
	}
	g.Expect(tlsSecretNames(both)).To(Equal([]string{"ca", "pub", "int"}))
	g.Expect(tlsSecretNames(api("ca", ptr.To("pub"), ptr.To("int"), true))).To(Equal([]string{"ca"}))
}
