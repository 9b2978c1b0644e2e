package deploy

import (
	"flag"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func testAPI() *keystonev1.KeystoneAPI {
	return &keystonev1.KeystoneAPI{
		ObjectMeta: metav1.ObjectMeta{Name: "keystone", Namespace: "openstack"},
		Spec: keystonev1.KeystoneAPISpec{
			ContainerImage: "keystone:test", Replicas: ptr.To[int32](1), Secret: "osp-secret",
			PasswordSelectors: keystonev1.PasswordSelector{Admin: "AdminPassword"},
			DatabaseInstance:  "openstack", DatabaseAccount: "keystone", MemcachedInstance: "memcached",
			Region: "regionOne", AdminProject: "admin", AdminUser: "admin",
			FernetRotationDays: ptr.To[int32](1), FernetMaxActiveKeys: ptr.To[int32](5),
		},
	}
}

var testInput = ConfigInput{
	DatabaseHostname: "openstack.openstack.svc",
	DatabaseUser:     "keystone",
	DatabasePassword: "p@ss:w/rd",
	MemcachedServers: []string{"memcached-0.memcached.openstack.svc:11211", "memcached-1.memcached.openstack.svc:11211"},
}

func TestRenderConfigGolden(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*keystonev1.KeystoneAPI)
	}{
		{"default", func(*keystonev1.KeystoneAPI) {}},
		{"custom", func(a *keystonev1.KeystoneAPI) {
			a.Spec.CustomServiceConfig = "[DEFAULT]\ndebug = true\n"
			a.Spec.FernetMaxActiveKeys = ptr.To[int32](3)
			a.Spec.DefaultConfigOverwrite = map[string]string{"policy.yaml": "\"identity:list_users\": \"role:admin\"\n"}
		}},
		{"tls-httpd", func(a *keystonev1.KeystoneAPI) {
			a.Spec.TLS.API.Public.SecretName = ptr.To("cert-keystone-public-svc")
			a.Spec.TLS.API.Internal.SecretName = ptr.To("cert-keystone-internal-svc")
			a.Spec.TLS.CaBundleSecretName = "combined-ca-bundle"
			a.Spec.APITimeout = 120
			a.Spec.HttpdCustomization.ProcessNumber = ptr.To[int32](5)
			a.Spec.EnableSecureRBAC = true
		}},
		// TLS to the database and memcached, as openstack-operator turns it on by default,
		// memcached asking for a client certificate.
		{"tls-backends", func(a *keystonev1.KeystoneAPI) {
			a.Spec.TLS.CaBundleSecretName = "combined-ca-bundle"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			api := testAPI()
			tt.mutate(api)
			in := testInput
			if tt.name == "tls-httpd" {
				in.HttpdCustom = map[string]string{"limits.conf": "LimitRequestBody {{ .APITimeout }}000\n"}
				in.TransportURL, in.QuorumQueues = "rabbit://keystone:pw@rabbitmq.openstack.svc:5672/keystone?ssl=1", true
				in.DatabaseTLS, in.MemcachedTLS = true, true
			}
			if tt.name == "tls-backends" {
				in.DatabaseTLS, in.MemcachedTLS, in.MemcachedMTLS = true, true, true
			}
			files, err := RenderConfig(api, in)
			g.Expect(err).NotTo(HaveOccurred())
			var b strings.Builder
			for _, name := range slices.Sorted(maps.Keys(files)) {
				b.WriteString("==> " + name + " <==\n" + files[name] + "\n")
			}
			golden := filepath.Join("testdata", "config-"+tt.name+".golden")
			if *update {
				g.Expect(os.WriteFile(golden, []byte(b.String()), 0o600)).To(Succeed())
			}
			want, err := os.ReadFile(golden)
			g.Expect(err).NotTo(HaveOccurred(), "run go test ./internal/deploy -update to create it")
			g.Expect(b.String()).To(Equal(string(want)))
		})
	}
}

func TestRenderConfig(t *testing.T) {
	g := NewWithT(t)
	files, err := RenderConfig(testAPI(), testInput)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(files[KeystoneConf]).To(ContainSubstring("connection = mysql+pymysql://openstack.openstack.svc/keystone?read_default_file=/etc/my.cnf"))
	g.Expect(files[KeystoneConf]).NotTo(ContainSubstring("p@ss"), "no password in keystone.conf")
	g.Expect(files[MyCnf]).To(ContainSubstring(`password = "p@ss:w/rd"`))
	g.Expect(files[KeystoneConf]).To(ContainSubstring("memcache_servers = memcached-0.memcached.openstack.svc:11211,memcached-1.memcached.openstack.svc:11211"))
	g.Expect(files[KeystoneConf]).To(ContainSubstring("provider = fernet"))
	g.Expect(files[KeystoneConf]).To(ContainSubstring("max_active_keys = 5"))
	g.Expect(files).To(HaveKeyWithValue(CustomConf, ""))

	api := testAPI()
	api.Spec.DefaultConfigOverwrite = map[string]string{KeystoneConf: "[DEFAULT]\n"}
	files, err = RenderConfig(api, testInput)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(files[KeystoneConf]).To(Equal("[DEFAULT]\n"), "defaultConfigOverwrite replaces a whole file")
	g.Expect(files[KeyRepositoriesConf]).To(ContainSubstring("[fernet_tokens]\nkey_repository = "+FernetKeyRepository+"\n"),
		"the keys still found")
	g.Expect(files[KeyRepositoriesConf]).To(ContainSubstring("[credential]\nkey_repository = " + CredentialKeyRepository + "\n"))
	g.Expect(APIFiles(api, testInput)).To(HaveKeyWithValue(KeyRepositoriesConfPath, KeyRepositoriesConf))
	g.Expect(jobConfigFiles).To(HaveKeyWithValue(KeyRepositoriesConfPath, KeyRepositoriesConf))
}

func TestRenderConfigRejectsLineBreaks(t *testing.T) {
	g := NewWithT(t)
	in := testInput
	in.DatabasePassword = "a\nb"
	_, err := RenderConfig(testAPI(), in)
	g.Expect(err).To(MatchError(ContainSubstring("line break")))
}

func TestHash(t *testing.T) {
	g := NewWithT(t)
	g.Expect(Hash(map[string]string{"a": "1", "b": "2"})).To(Equal(Hash(map[string]string{"b": "2", "a": "1"})))
	g.Expect(Hash(map[string]string{"a": "1b=2"})).NotTo(Equal(Hash(map[string]string{"a": "1", "b": "2"})))
	g.Expect(Hash(map[string]string{"a": "1"})).NotTo(Equal(Hash(map[string]string{"a": "2"})))
}

// TestUsersTemplatesAsKeystoneOperatorRendersThem: httpdCustomization's snippets,
// customServiceConfig and defaultConfigOverwrite's files are rendered with
// keystone-operator's parameters and lib-common's functions (upstream's own test snippet
// for OIDC among them); a snippet that does not render fails the configuration, the other
// files are used as written, saying so; no error quotes a password.
func TestUsersTemplatesAsKeystoneOperatorRendersThem(t *testing.T) {
	g := NewWithT(t)
	in := testInput
	in.TransportURL = "rabbit://keystone:rabbit-secret@rabbitmq.openstack.svc:5671/"
	in.MemcachedServersWithInet = []string{"inet:[memcached-0.memcached.openstack.svc]:11211"}
	// keystone-operator's test/functional/keystoneapi_controller_test.go snippet.
	in.HttpdCustom = map[string]string{"oidc.conf": `OIDCRedirectURI "{{ .KeystoneEndpointPublic }}/v3/auth/OS-FEDERATION/websso/openid"` +
		"\n# {{ .VHosts.public.ServerName }} {{ .VHosts.internal.TLS }} {{ lower \"ABC\" }} {{ add 1 2 }} {{ .TimeOut }} " +
		"{{ .ProcessNumber }} {{ .MemcachedServersWithInet }} {{ .APITimeout }}\n"}
	api := testAPI()
	api.Spec.APITimeout = 60
	api.Spec.CustomServiceConfig = "[federation]\ntrusted_dashboard = {{ .KeystoneEndpointPublic }}/dashboard/auth/websso/\n"
	api.Spec.DefaultConfigOverwrite = map[string]string{"policy.yaml": "# {{ .NoSuchParameter }}\n", "sso.conf": "url={{ .KeystoneEndpointInternal }}"}
	r, err := Render(api, in)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(r.Files[HttpdCustomFile("public", "oidc.conf")]).To(Equal(
		`OIDCRedirectURI "http://keystone-public.openstack.svc:5000/v3/auth/OS-FEDERATION/websso/openid"` + "\n" +
			"# keystone-public.openstack.svc false abc 3 60 3 inet:[memcached-0.memcached.openstack.svc]:11211 60\n"))
	g.Expect(r.Files[CustomConf]).To(Equal(
		"[federation]\ntrusted_dashboard = http://keystone-public.openstack.svc:5000/dashboard/auth/websso/\n"))
	g.Expect(r.Files["sso.conf"]).To(Equal("url=http://keystone-internal.openstack.svc:5000"))
	g.Expect(r.Files["policy.yaml"]).To(Equal("# {{ .NoSuchParameter }}\n"), "not a template of these parameters: as written")
	g.Expect(r.AsWritten).To(ConsistOf(ContainSubstring("rendering defaultConfigOverwrite policy.yaml: ")))

	// Errors that would quote a password, whole, in part, turned, or a byte at a time;
	// the last one fails only with the real values (a password of 3 characters).
	short := in
	short.DatabasePassword = "p@s"
	for _, snippet := range []string{
		`{{ .DatabasePassword }}`,
		`{{ execTempl .TransportURL . }}`,
		`{{ execTempl .DatabaseConnection . }}`,
		`{{ execTempl (printf "%x" .DatabaseConnection) . }}`,
		`{{ execTempl (slice .TransportURL 9 22 | lower) . }}`,
		`{{ index .TransportURL 12 | slice "abc" }}`,
		`{{ slice (printf "%v" .) 0 100000 }}`,
		`{{ if eq (len .DatabaseConnection) 8 }}{{ else }}{{ execTempl .DatabaseConnection . }}{{ end }}`,
	} {
		for _, input := range []ConfigInput{in, short} {
			input.HttpdCustom = map[string]string{"probe.conf": snippet}
			_, err := Render(testAPI(), input)
			g.Expect(err).To(HaveOccurred(), snippet)
			for _, secret := range []string{"p@s", "rabbit-secret", "7040", "72616262"} { // 7040: "p@" in hexadecimal
				g.Expect(err.Error()).NotTo(ContainSubstring(secret), snippet)
			}
		}
	}
	// What renders with the real values renders, whatever it would do with them hidden.
	in.HttpdCustom = map[string]string{"scheme.conf": `# {{ slice .DatabaseConnection 0 13 }}`}
	r, err = Render(testAPI(), in)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(r.Files[HttpdCustomFile("public", "scheme.conf")]).To(Equal("# mysql+pymysql"))
	in.HttpdCustom = nil
	api = testAPI()
	api.Spec.CustomServiceConfig = "{{ execTempl .TransportURL . }}"
	r, err = Render(api, in)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(r.AsWritten).To(ConsistOf(ContainSubstring(`no template "(hidden)"`)))
	g.Expect(strings.Join(r.AsWritten, "")).NotTo(ContainSubstring("rabbit-secret"))
}
