package deploy

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	. "github.com/onsi/gomega"
	topologyv1 "github.com/openstack-k8s-operators/infra-operator/apis/topology/v1beta1"
	"github.com/openstack-k8s-operators/lib-common/modules/storage"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

var updateObjects = flag.Bool("update-objects", false, "rewrite testdata/objects")

// TestBuiltObjects builds every object a KeystoneAPI owns for a table of gathered
// inputs and compares it with testdata/objects/<case>/<object>.yaml (written, before the
// builders moved here, from the controller's own composition: the same files show
// behaviour unchanged). go test -update-objects rewrites them.
func TestBuiltObjects(t *testing.T) {
	spread := []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.ScheduleAnyway}}
	cases := []struct {
		name   string
		mutate func(*Gathered)
		// input is what the configuration was rendered from (APIFiles).
		input ConfigInput
	}{
		{name: "defaults"},
		{name: "tls", mutate: func(in *Gathered) {
			in.API.Spec.TLS.API.Public.SecretName = ptr.To("cert-keystone-public-svc")
			in.API.Spec.TLS.API.Internal.SecretName = ptr.To("cert-keystone-internal-svc")
			in.API.Spec.TLS.CaBundleSecretName = "combined-ca-bundle"
		}},
		{name: "topology", mutate: func(in *Gathered) {
			in.Topology = &topologyv1.Topology{ObjectMeta: metav1.ObjectMeta{Name: "zones"},
				Spec: topologyv1.TopologySpec{TopologySpreadConstraints: &spread}}
		}},
		{name: "networks", mutate: func(in *Gathered) { in.API.Spec.NetworkAttachments = []string{"internalapi", "storage"} }},
		{name: "memcached-mtls", mutate: func(in *Gathered) { in.MemcachedMTLSSecret = "cert-memcached-mtls" }},
		{name: "extramounts", mutate: func(in *Gathered) {
			in.API.Spec.ExtraMounts = []keystonev1.KeystoneExtraMounts{{Name: "ldap", VolMounts: []storage.VolMounts{{
				Volumes: []storage.Volume{{Name: "ldap", VolumeSource: storage.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "ldap"}}}},
				Mounts:  []corev1.VolumeMount{{Name: "ldap", MountPath: "/etc/keystone/domains", ReadOnly: true}}}}}}
		}},
		{name: "custom-files", input: ConfigInput{HttpdCustom: map[string]string{"10-oidc.conf": "OIDCClaimPrefix OIDC-"},
			FederationFiles: map[string]string{"idp.example.com%2Frealms%2Fone.provider": "{}"}},
			mutate: func(in *Gathered) { in.API.Spec.DefaultConfigOverwrite = map[string]string{"policy.yaml": "{}"} }},
		{name: "anyuid", mutate: func(in *Gathered) { in.SCC = AnyUIDSCC }},
		{name: "taken-over-selector", mutate: func(in *Gathered) {
			in.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"service": "keystone"}}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			api := testAPI()
			api.Spec.TrustFlushSchedule, api.Spec.TrustFlushArgs = "1 * * * *", "--date 2026-01-01"
			api.Status.APIEndpoints = map[string]string{keystonev1.EndpointPublic: "https://keystone-public-openstack.apps",
				keystonev1.EndpointInternal: "https://keystone-internal.openstack.svc:5000"}
			in := Gathered{API: api, PodRevision: "pod-revision", DBSyncHash: "dbsync-hash", BootstrapHash: "bootstrap-hash"}
			if tc.mutate != nil {
				tc.mutate(&in)
			}
			in.APIFiles = APIFiles(in.API, tc.input)
			objects := map[string]any{"job-db-sync": in.DBSyncJob(), "job-bootstrap": in.BootstrapJob()}
			var err error
			objects["deployment"], err = in.Deployment()
			g.Expect(err).NotTo(HaveOccurred())
			objects["cronjob"], err = in.TrustFlushCronJob()
			g.Expect(err).NotTo(HaveOccurred())
			services, err := in.Services()
			g.Expect(err).NotTo(HaveOccurred())
			for _, svc := range services {
				objects["service-"+svc.Name] = svc
			}

			dir := filepath.Join("testdata", "objects", tc.name)
			for name, obj := range objects {
				got, err := yaml.Marshal(obj)
				g.Expect(err).NotTo(HaveOccurred())
				path := filepath.Join(dir, name+".yaml")
				if *updateObjects {
					g.Expect(os.MkdirAll(dir, 0o750)).To(Succeed())
					g.Expect(os.WriteFile(path, got, 0o600)).To(Succeed())
					continue
				}
				want, err := os.ReadFile(path)
				g.Expect(err).NotTo(HaveOccurred(), "go test -update-objects writes %s", path)
				g.Expect(string(got)).To(Equal(string(want)), path)
			}
		})
	}
}

// TestSecretRevision: a certificate Secret's revision follows its data, not its
// metadata (a label added rolls no pod).
func TestSecretRevision(t *testing.T) {
	g := NewWithT(t)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{UID: "u1", ResourceVersion: "1"},
		Data: map[string][]byte{"tls.crt": []byte("cert-1"), "tls.key": []byte("key-1")}}
	before := SecretRevision(secret)
	labelled := secret.DeepCopy()
	labelled.Labels, labelled.ResourceVersion = map[string]string{"example.com/reviewed": "yes"}, "2"
	g.Expect(SecretRevision(labelled)).To(Equal(before))
	renewed := secret.DeepCopy()
	renewed.Data["tls.crt"] = []byte("cert-2")
	g.Expect(SecretRevision(renewed)).NotTo(Equal(before))
	recreated := secret.DeepCopy()
	recreated.UID = "u2"
	g.Expect(SecretRevision(recreated)).NotTo(Equal(before), "another Secret of the same name")
}

// TestJobDigests: db-sync's digest follows the configuration and the image;
// bootstrap's the database, image, admin identity, region and endpoints, and nothing
// secret.
func TestJobDigests(t *testing.T) {
	g := NewWithT(t)
	api := testAPI()
	g.Expect(DBSyncDigest(api, "rev1")).NotTo(Equal(DBSyncDigest(api, "rev2")))
	before := BootstrapDigest(api)
	g.Expect(BootstrapDigest(api)).To(Equal(before), "a function of the KeystoneAPI")
	other := api.DeepCopy()
	other.Spec.Region = "regionTwo"
	g.Expect(BootstrapDigest(other)).NotTo(Equal(before))
	other = api.DeepCopy()
	other.Status.APIEndpoints = map[string]string{"internal": "https://keystone-internal.openstack.svc:5000"}
	g.Expect(BootstrapDigest(other)).NotTo(Equal(before))
	other = api.DeepCopy()
	other.Spec.Secret = "another-secret"
	g.Expect(BootstrapDigest(other)).To(Equal(before), "the password's Secret is not a public input")
	newImage := api.DeepCopy()
	newImage.Spec.ContainerImage = "keystone:next"
	g.Expect(DBSyncDigest(newImage, "rev1")).NotTo(Equal(DBSyncDigest(api, "rev1")))
	g.Expect(BootstrapDigest(newImage)).NotTo(Equal(before))
}
