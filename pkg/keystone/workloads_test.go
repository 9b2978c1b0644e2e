package keystone

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestDeployment(t *testing.T) {
	g := NewWithT(t)
	api := testAPI()
	api.Spec.Replicas = ptr.To[int32](3)
	api.Spec.NodeSelector = &map[string]string{"zone": "a"}
	dep := Deployment(api, "hash-1")
	g.Expect(dep.Spec.Replicas).To(HaveValue(BeEquivalentTo(3)))
	g.Expect(dep.Spec.Template.Annotations).To(HaveKeyWithValue(HashAnnotation, "hash-1"))
	g.Expect(dep.Spec.Template.Spec.NodeSelector).To(HaveKeyWithValue("zone", "a"))
	c := dep.Spec.Template.Spec.Containers[0]
	g.Expect(c.Image).To(Equal("keystone:test"))
	g.Expect(c.ReadinessProbe.HTTPGet.Path).To(Equal("/v3"))
	g.Expect(*c.SecurityContext.RunAsNonRoot).To(BeTrue())
	g.Expect(*c.SecurityContext.AllowPrivilegeEscalation).To(BeFalse())
	g.Expect(c.SecurityContext.Capabilities.Drop).To(ConsistOf(corev1.Capability("ALL")))
	g.Expect(dep.Spec.Template.Spec.AutomountServiceAccountToken).To(HaveValue(BeFalse()), "no API token in Keystone's pods")

	var fernet *corev1.Volume
	for i, v := range dep.Spec.Template.Spec.Volumes {
		if v.Name == "fernet-keys" {
			fernet = &dep.Spec.Template.Spec.Volumes[i]
		}
	}
	g.Expect(fernet).NotTo(BeNil())
	g.Expect(fernet.Secret.SecretName).To(Equal("keystone-keys"))
	g.Expect(fernet.Secret.Items).To(HaveLen(5))
	g.Expect(fernet.Secret.Items[4]).To(Equal(corev1.KeyToPath{Key: "FernetKeys4", Path: "4"}))

	other := Deployment(api, "hash-1")
	g.Expect(other).To(Equal(dep), "a pure function of the spec and the config hash: keys are mounted, not hashed")
}

func TestJobs(t *testing.T) {
	g := NewWithT(t)
	api := testAPI()
	api.Spec.AdminUser = "o'brien"
	sync := DBSyncJob(api, "h1")
	g.Expect(sync.Name).To(Equal("keystone-db-sync"))
	g.Expect(sync.Annotations).To(HaveKeyWithValue(HashAnnotation, "h1"))
	g.Expect(*sync.Spec.BackoffLimit).To(Equal(JobBackoffLimit))
	g.Expect(sync.Spec.Template.Spec.RestartPolicy).To(Equal(corev1.RestartPolicyNever))
	files, err := RenderConfig(api, ConfigInput{DatabaseHostname: "db"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(files[ManageConf]).To(ContainSubstring(fmt.Sprintf("max_retries = %d\n", JobDBRetries)), "a job's database retries are bounded")
	g.Expect(files[APIKollaConfig]).To(ContainSubstring(`"dest": "/etc/keystone/`+ManageConf+`"`), "kolla installs it where the jobs read it")
	g.Expect(sync.Spec.ActiveDeadlineSeconds).To(HaveValue(Equal(JobDeadlineSeconds)), "a job is bounded whatever hangs")
	g.Expect(sync.Spec.Template.Spec.Containers[0].Command[2]).To(HaveSuffix("exec keystone-manage " + ManageConfigArgs + " db_sync"))
	g.Expect(ManageConfigArgs).To(HaveSuffix("--config-file /etc/keystone/"+ManageConf), "the bound is read last, so it wins")

	boot := BootstrapJob(api, "h2", map[string]string{keystonev1.EndpointPublic: "https://k.example.com", keystonev1.EndpointInternal: "http://k-int:5000"})
	cmd := boot.Spec.Template.Spec.Containers[0].Command[2]
	g.Expect(cmd).To(ContainSubstring(`--bootstrap-username 'o'\''brien'`), "names are shell-quoted")
	g.Expect(cmd).To(ContainSubstring("--bootstrap-public-url 'https://k.example.com'"))
	g.Expect(cmd).To(ContainSubstring("--bootstrap-internal-url 'http://k-int:5000'"))
	g.Expect(strings.Contains(cmd, "secret")).To(BeFalse(), "the password is not on the command line")
	env := boot.Spec.Template.Spec.Containers[0].Env[0]
	g.Expect(env.Name).To(Equal(BootstrapPasswordEnv))
	g.Expect(env.ValueFrom.SecretKeyRef.Name).To(Equal("osp-secret"))
	g.Expect(env.ValueFrom.SecretKeyRef.Key).To(Equal("AdminPassword"))
}

func TestServicesAndEndpoints(t *testing.T) {
	g := NewWithT(t)
	api := testAPI()
	svcs := Services(api)
	g.Expect(svcs).To(HaveLen(2))
	g.Expect(svcs[0].Name).To(Equal("keystone-public"))
	g.Expect(svcs[1].Name).To(Equal("keystone-internal"))
	g.Expect(svcs[1].Spec.Ports[0].Port).To(BeEquivalentTo(5000))
	g.Expect(Endpoints(api)).To(Equal(map[string]string{
		"public": "http://keystone-public.openstack.svc:5000", "internal": "http://keystone-internal.openstack.svc:5000"}))
	api.Spec.Override.Service = &keystonev1.ServiceOverrides{Public: &keystonev1.EndpointOverride{EndpointURL: ptr.To("https://keystone.example.com")}}
	g.Expect(Endpoints(api)[keystonev1.EndpointPublic]).To(Equal("https://keystone.example.com"))
	g.Expect(Endpoints(api)[keystonev1.EndpointInternal]).To(Equal("http://keystone-internal.openstack.svc:5000"))
}

// TestCredentialFilesPrivate checks that every configuration file that may hold a
// credential is installed readable by Keystone's user only.
func TestCredentialFilesPrivate(t *testing.T) {
	g := NewWithT(t)
	files, err := RenderConfig(testAPI(), ConfigInput{DatabaseHostname: "db", DatabaseUser: "keystone", DatabasePassword: "pw"})
	g.Expect(err).NotTo(HaveOccurred())
	var kolla struct {
		ConfigFiles []struct{ Source, Dest, Perm string } `json:"config_files"`
	}
	g.Expect(json.Unmarshal([]byte(files[APIKollaConfig]), &kolla)).To(Succeed())
	g.Expect(kolla.ConfigFiles).NotTo(BeEmpty())
	for _, f := range kolla.ConfigFiles {
		if strings.HasSuffix(f.Dest, "httpd.conf") {
			continue // no credential in it
		}
		g.Expect(f.Perm).To(Equal("0600"), f.Dest)
	}
	for _, job := range []*batchv1.Job{DBSyncJob(testAPI(), "h"), BootstrapJob(testAPI(), "h", map[string]string{})} {
		g.Expect(job.Spec.Template.Spec.AutomountServiceAccountToken).To(HaveValue(BeFalse()), job.Name)
	}
}
