package keystoneapi

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	. "github.com/onsi/gomega"
	topologyv1 "github.com/openstack-k8s-operators/infra-operator/apis/topology/v1beta1"
	"github.com/openstack-k8s-operators/lib-common/modules/storage"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files")

// TestBuiltObjectsGolden builds, as the controller does, the objects a KeystoneAPI owns
// for a table of specs and compares them with internal/deploy/testdata/objects.
func TestBuiltObjectsGolden(t *testing.T) {
	base := func() *keystonev1.KeystoneAPI {
		return &keystonev1.KeystoneAPI{
			ObjectMeta: metav1.ObjectMeta{Name: "keystone", Namespace: "openstack"},
			Spec: keystonev1.KeystoneAPISpec{
				ContainerImage: "keystone:test", Replicas: ptr.To[int32](1), Secret: "osp-secret",
				PasswordSelectors: keystonev1.PasswordSelector{Admin: "AdminPassword"},
				DatabaseInstance:  "openstack", DatabaseAccount: "keystone", MemcachedInstance: "memcached",
				Region: "regionOne", AdminProject: "admin", AdminUser: "admin",
				FernetRotationDays: ptr.To[int32](1), FernetMaxActiveKeys: ptr.To[int32](5),
				TrustFlushSchedule: "1 * * * *", TrustFlushArgs: "--date 2026-01-01",
			},
		}
	}
	spread := []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.ScheduleAnyway}}
	cases := []struct {
		name     string
		mutate   func(*keystonev1.KeystoneAPI)
		selector *metav1.LabelSelector
		topology *topologyv1.Topology
		mtls     string
	}{
		{name: "defaults"},
		{name: "tls", mutate: func(a *keystonev1.KeystoneAPI) {
			a.Spec.TLS.API.Public.SecretName = ptr.To("cert-keystone-public-svc")
			a.Spec.TLS.API.Internal.SecretName = ptr.To("cert-keystone-internal-svc")
			a.Spec.TLS.CaBundleSecretName = "combined-ca-bundle"
		}},
		{name: "topology", topology: &topologyv1.Topology{ObjectMeta: metav1.ObjectMeta{Name: "zones"},
			Spec: topologyv1.TopologySpec{TopologySpreadConstraints: &spread}}},
		{name: "networks", mutate: func(a *keystonev1.KeystoneAPI) { a.Spec.NetworkAttachments = []string{"internalapi", "storage"} }},
		{name: "memcached-mtls", mtls: "cert-memcached-mtls"},
		{name: "extramounts", mutate: func(a *keystonev1.KeystoneAPI) {
			a.Spec.ExtraMounts = []keystonev1.KeystoneExtraMounts{{Name: "ldap", VolMounts: []storage.VolMounts{{
				Volumes: []storage.Volume{{Name: "ldap", VolumeSource: storage.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "ldap"}}}},
				Mounts:  []corev1.VolumeMount{{Name: "ldap", MountPath: "/etc/keystone/domains", ReadOnly: true}}}}}}
		}},
		{name: "taken-over-selector", selector: &metav1.LabelSelector{MatchLabels: map[string]string{"service": "keystone"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			api := base()
			if tc.mutate != nil {
				tc.mutate(api)
			}
			objects := map[string]any{}

			dep := deploy.Deployment(api, "pod-revision")
			keepSelector(dep, &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Selector: tc.selector}})
			deploy.WithMemcachedMTLS(&dep.Spec.Template.Spec, tc.mtls)
			applyTopology(api, tc.topology, &dep.Spec.Template)
			networks, err := networksAnnotation(api)
			g.Expect(err).NotTo(HaveOccurred())
			dep.Spec.Template.Annotations = mergeLabels(dep.Spec.Template.Annotations, networks)
			digest, err := templateDigest(&dep.Spec.Template)
			g.Expect(err).NotTo(HaveOccurred())
			metav1.SetMetaDataAnnotation(&dep.ObjectMeta, TemplateAnnotation, digest)
			objects["deployment"] = dep

			dbsync := deploy.DBSyncJob(api, "dbsync-hash")
			deploy.WithMemcachedMTLS(&dbsync.Spec.Template.Spec, tc.mtls)
			objects["job-db-sync"] = dbsync
			bootstrap := deploy.BootstrapJob(api, "bootstrap-hash", map[string]string{
				keystonev1.EndpointPublic: "https://keystone-public-openstack.apps", keystonev1.EndpointInternal: "https://keystone-internal.openstack.svc:5000"})
			deploy.WithMemcachedMTLS(&bootstrap.Spec.Template.Spec, tc.mtls)
			objects["job-bootstrap"] = bootstrap
			cron := deploy.TrustFlushCronJob(api)
			deploy.WithMemcachedMTLS(&cron.Spec.JobTemplate.Spec.Template.Spec, tc.mtls)
			cronDigest, err := templateDigest(&cron.Spec.JobTemplate.Spec.Template)
			g.Expect(err).NotTo(HaveOccurred())
			metav1.SetMetaDataAnnotation(&cron.ObjectMeta, TemplateAnnotation, cronDigest)
			objects["cronjob"] = cron
			services, err := deploy.Services(api)
			g.Expect(err).NotTo(HaveOccurred())
			selector := deploy.SelectorLabels(api)
			if tc.selector != nil {
				selector = tc.selector.MatchLabels
			}
			for _, svc := range services {
				svc.Spec.Selector = selector
				objects["service-"+svc.Name] = svc
			}

			dir := filepath.Join("..", "..", "internal", "deploy", "testdata", "objects", tc.name)
			for name, obj := range objects {
				got, err := yaml.Marshal(obj)
				g.Expect(err).NotTo(HaveOccurred())
				path := filepath.Join(dir, name+".yaml")
				if *updateGolden {
					g.Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
					g.Expect(os.WriteFile(path, got, 0o600)).To(Succeed())
					continue
				}
				want, err := os.ReadFile(path)
				g.Expect(err).NotTo(HaveOccurred(), "run go test -update to write %s", path)
				g.Expect(string(got)).To(Equal(string(want)), path)
			}
		})
	}
}
