package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/cmd/manager"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

func parse(t *testing.T, args ...string) manager.Options {
	t.Helper()
	var c commandLine
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	c.bind(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return c.options()
}

// The arguments openstack-operator gives the operators it runs
// (bindata/operator/managers.yaml): by default, and with METRICS_CERTS and
// ENABLE_WEBHOOKS set in the operator's environment.
func TestOpenStackOperatorArguments(t *testing.T) {
	o := parse(t, "--leader-elect", "--health-probe-bind-address=:8081", "--metrics-bind-address=127.0.0.1:8080")
	if !o.LeaderElection || o.ProbeAddr != ":8081" || o.MetricsAddr != "127.0.0.1:8080" {
		t.Errorf("default arguments: got %+v", o)
	}
	if m := manager.MetricsServerOptions(o); m.SecureServing {
		t.Errorf("default arguments: metrics over HTTPS, want plain HTTP on localhost")
	}

	o = parse(t, "--leader-elect", "--health-probe-bind-address=:8081", "--metrics-bind-address=:8443",
		"--metrics-cert-path=/tmp/k8s-metrics-server/metrics-certs", "--webhook-cert-path=/tmp/k8s-webhook-server/serving-certs")
	m := manager.MetricsServerOptions(o)
	if !m.SecureServing || m.BindAddress != ":8443" || m.CertDir != "/tmp/k8s-metrics-server/metrics-certs" ||
		m.CertName != "tls.crt" || m.KeyName != "tls.key" || m.FilterProvider == nil {
		t.Errorf("METRICS_CERTS arguments: metrics server %+v, want HTTPS on :8443 with the mounted certificate, callers authorized", m)
	}
}

// The Deployment of config/default runs with arguments the command accepts.
func TestConfigDefaultArguments(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "config", "manager", "manager.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var dep appsv1.Deployment
	for dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096); dep.Kind != "Deployment"; {
		if err := dec.Decode(&dep); err != nil {
			t.Fatalf("config/manager/manager.yaml: no Deployment read: %v", err)
		}
	}
	c := dep.Spec.Template.Spec.Containers[0]
	if len(c.Command) != 1 || c.Command[0] != "/manager" {
		t.Errorf("command %v, want /manager (the image's, as openstack-operator runs it)", c.Command)
	}
	o := parse(t, c.Args...)
	if !o.LeaderElection || !manager.MetricsServerOptions(o).SecureServing {
		t.Errorf("config/default: %+v, want leader election and metrics over HTTPS", o)
	}
}

// The default Keystone image comes from keystone-operator's variable, as its
// SetupDefaults reads it; without it, the manager falls back to keystone-operator's.
func TestDefaultImageFromEnvironment(t *testing.T) {
	g := NewWithT(t)
	t.Setenv(keystonev1.ContainerImageEnv, "registry.example/keystone:2026.11")
	g.Expect(parse(t).KeystoneAPIImage).To(Equal("registry.example/keystone:2026.11"))
	t.Setenv(keystonev1.ContainerImageEnv, "")
	g.Expect(parse(t).KeystoneAPIImage).To(BeEmpty(), "the KeystoneAPI controller then uses keystonev1.KeystoneAPIContainerImage")
}
