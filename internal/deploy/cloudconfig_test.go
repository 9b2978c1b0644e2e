package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"
)

func TestOpenStackConfig(t *testing.T) {
	g := NewWithT(t)
	api := testAPI()
	api.Spec.Region = "regionTwo"
	cm, err := OpenStackConfig(api, "https://keystone-public.openstack.svc:5000")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cm).To(HaveKeyWithValue("OS_CLOUD", "default"))
	var clouds map[string]any
	g.Expect(yaml.Unmarshal([]byte(cm["clouds.yaml"]), &clouds)).To(Succeed())
	g.Expect(clouds).To(Equal(map[string]any{"clouds": map[string]any{"default": map[string]any{
		"auth": map[string]any{"auth_url": "https://keystone-public.openstack.svc:5000", "project_name": "admin",
			"username": "admin", "user_domain_name": "Default", "project_domain_name": "Default"},
		"region_name": "regionTwo",
	}}}))
	g.Expect(cm["clouds.yaml"]).NotTo(ContainSubstring("password"))

	password := `it's "tricky" $HOME`
	secret, err := OpenStackConfigSecret(api, "https://keystone-public.openstack.svc:5000", password)
	g.Expect(err).NotTo(HaveOccurred())
	var secure map[string]any
	g.Expect(yaml.Unmarshal([]byte(secret["secure.yaml"]), &secure)).To(Succeed())
	g.Expect(secure).To(Equal(map[string]any{"clouds": map[string]any{"default": map[string]any{
		"auth": map[string]any{"password": password}}}}))

	// cloudrc, sourced by a shell, sets exactly the values.
	rc := filepath.Join(t.TempDir(), "cloudrc")
	g.Expect(os.WriteFile(rc, []byte(secret["cloudrc"]), 0o600)).To(Succeed())
	out, err := exec.Command("bash", "-c", `. "$0" && printf '%s\n' "$OS_AUTH_URL" "$OS_USERNAME" "$OS_PROJECT_NAME" "$OS_REGION_NAME" "$OS_PASSWORD"`, rc).Output()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")).To(Equal(
		[]string{"https://keystone-public.openstack.svc:5000", "admin", "admin", "regionTwo", password}))
}
