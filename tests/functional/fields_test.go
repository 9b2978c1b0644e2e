package functional

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// fieldSpecs names, for every property of KeystoneAPI's spec, a spec of this suite
// that shows it taking effect (the beginning of its It text).
var fieldSpecs = map[string]string{
	"adminProject":           "runs containerImage, and bootstraps adminUser, adminProject and region",
	"adminUser":              "runs containerImage, and bootstraps adminUser, adminProject and region",
	"apiTimeout":             "renders httpdCustomization, apiTimeout, enableSecureRBAC",
	"containerImage":         "runs containerImage, and bootstraps adminUser, adminProject and region",
	"customServiceConfig":    "follows a new generation; the steps the change cannot affect stay True",
	"databaseAccount":        "moves its finalizer to a new Memcached and MariaDBAccount once its pods use them",
	"databaseInstance":       "walks every step forward, each with its reason and severity",
	"defaultConfigOverwrite": "renders httpdCustomization, apiTimeout, enableSecureRBAC and every defaultConfigOverwrite file",
	"enableSecureRBAC":       "renders httpdCustomization, apiTimeout, enableSecureRBAC",
	"externalKeystoneAPI":    "is Ready when the admin authenticates at the override URL",
	"extraMounts":            "mounts extraMounts into the API pods",
	"federatedRealmConfig":   "installs the federated realms' metadata of federatedRealmConfig",
	"fernetMaxActiveKeys":    "rotate after fernetRotationDays the way keystone-manage does",
	"fernetRotationDays":     "rotate after fernetRotationDays the way keystone-manage does",
	"httpdCustomization":     "renders httpdCustomization, apiTimeout, enableSecureRBAC",
	"memcachedInstance":      "moves its finalizer to a new Memcached and MariaDBAccount once its pods use them",
	"networkAttachments":     "waits for its NetworkAttachmentDefinition, asks Multus for it",
	"nodeSelector":           "removes from the pods what is removed from the spec: a nodeSelector key",
	"notificationsBus":       "asks infra-operator for a TransportURL, waits for it, renders the notifier",
	"override":               "exposes the internal interface as a LoadBalancer with MetalLB's annotations",
	"passwordSelectors":      "goes back to not Ready when the admin secret is deleted",
	"preserveJobs":           "walks every step forward, each with its reason and severity",
	"rabbitMqClusterName":    "asks infra-operator for a TransportURL, waits for it, renders the notifier",
	"region":                 "runs containerImage, and bootstraps adminUser, adminProject and region",
	"registrationPolicy":     "refuses at InputReady what spec.registrationPolicy does not allow",
	"replicas":               "is Ready scaled to 0, with readyCount 0",
	"resources":              "removes from the pods what is removed from the spec: a nodeSelector key, a resource limit",
	"secret":                 "goes back to not Ready when the admin secret is deleted",
	"tls":                    "waits for its certificates, refuses a bad one, serves HTTPS",
	"topologyRef":            "waits for its Topology, spreads the pods with it",
	"trustFlushArgs":         "runs keystone-manage trust_flush from a CronJob that follows the spec",
	"trustFlushSchedule":     "runs keystone-manage trust_flush from a CronJob that follows the spec",
	"trustFlushSuspend":      "runs keystone-manage trust_flush from a CronJob that follows the spec",
}

// TestEveryFieldHasASpec fails when a property of KeystoneAPI's spec has no spec
// showing it take effect, or names a spec that does not exist.
func TestEveryFieldHasASpec(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "crd", "bases", "keystone.openstack.org_keystoneapis.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, crd); err != nil {
		t.Fatal(err)
	}
	var its []string
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	itText := regexp.MustCompile(`It\("([^"]*)"`)
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range itText.FindAllStringSubmatch(string(src), -1) {
			its = append(its, m[1])
		}
	}
	var fields []string
	for name := range crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties {
		fields = append(fields, name)
	}
	sort.Strings(fields)
	for _, field := range fields {
		spec, ok := fieldSpecs[field]
		if !ok {
			t.Errorf("spec.%s: no spec shows it taking effect (add one to fieldSpecs)", field)
			continue
		}
		found := false
		for _, it := range its {
			found = found || strings.HasPrefix(it, spec)
		}
		if !found {
			t.Errorf("spec.%s: no It(%q...) in tests/functional", field, spec)
		}
	}
	for field := range fieldSpecs {
		if _, ok := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties[field]; !ok {
			t.Errorf("fieldSpecs lists %s, which the schema does not have", field)
		}
	}
}
