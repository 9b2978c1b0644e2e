package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/tests/support/controlplane"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ran is what a command left a user: the last line it printed on stderr and its exit code.
type ran struct {
	lastErrLine string
	code        int
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// TestAsKubectl: against a real API server, the plugin takes the names kubectl get takes
// and says what goes wrong as kubectl get says it, with its exit code: the same command
// line run by kubectl (the envtest binary) and by the plugin.
func TestAsKubectl(t *testing.T) {
	g := NewWithT(t)
	root, err := controlplane.RepoRoot()
	g.Expect(err).NotTo(HaveOccurred())
	cp := controlplane.Start(t, root)
	cfg, kubectl := cp.Config, cp.Kubectl
	t.Setenv("KUBECONFIG", cp.Kubeconfig)

	ctx := context.Background()
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	for _, ns := range []string{"openstack", "empty"} {
		g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	}
	g.Expect(c.Create(ctx, &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Namespace: "openstack", Name: "glance"},
		Spec: keystonev1.KeystoneServiceSpec{ServiceType: "image", ServiceName: "glance", ServiceUser: "glance", Secret: "osp-secret",
			PasswordSelector: "GlancePassword"}})).To(Succeed())
	g.Expect(c.Create(ctx, &keystonev1.KeystoneApplicationCredential{ObjectMeta: metav1.ObjectMeta{Namespace: "openstack", Name: "ac-glance"},
		Spec: keystonev1.KeystoneApplicationCredentialSpec{UserName: "glance", Secret: "osp-secret", PasswordSelector: "GlancePassword",
			Roles: []string{"service"}, ExpirationDays: 365, GracePeriodDays: 182}})).To(Succeed())

	byKubectl := func(args ...string) ran {
		cmd := exec.Command(kubectl, args...)
		var stderr bytes.Buffer
		cmd.Stderr, cmd.Env = &stderr, append(os.Environ(), "KUBECONFIG="+cp.Kubeconfig)
		err := cmd.Run()
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatalf("kubectl %v: %v", args, err)
		}
		return ran{lastLine(stderr.String()), code}
	}
	byPlugin := func(args ...string) ran {
		var out, errOut bytes.Buffer
		cmd := newCommand(genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}, connect, mapper)
		cmd.SetArgs(args)
		if err := cmd.Execute(); err != nil {
			s := said(err)
			return ran{s.text, s.code}
		}
		return ran{lastLine(errOut.String()), 0}
	}

	// A server that takes connections and never answers (a TLS handshake that never ends).
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = silent.Close() })
	go func() {
		for {
			conn, err := silent.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = conn.Close() })
		}
	}()
	mute := "https://" + silent.Addr().String()

	for _, tc := range []struct {
		what          string
		kubectl, tree []string
		// upTo, when set, compares the line that far: what follows varies between two
		// runs of kubectl itself (which of its timers fires first).
		upTo string
	}{
		{"an object that does not exist", []string{"get", "keystoneservice", "nope", "-n", "openstack"},
			[]string{"tree", "keystoneservice", "nope", "-n", "openstack"}, ""},
		{"an empty namespace", []string{"get", "keystoneapis", "-n", "empty"}, []string{"tree", "-n", "empty"}, ""},
		{"a user who may not list", []string{"get", "keystoneapis", "-n", "openstack", "--as", "nobody"},
			[]string{"tree", "-n", "openstack", "--as", "nobody"}, ""},
		{"a type the server does not have", []string{"get", "nosuchtype", "x", "-n", "openstack"},
			[]string{"tree", "nosuchtype", "x", "-n", "openstack"}, ""},
		{"a server that refuses the connection", []string{"get", "keystoneapis", "-s", "https://127.0.0.1:1", "--insecure-skip-tls-verify"},
			[]string{"tree", "-s", "https://127.0.0.1:1", "--insecure-skip-tls-verify"}, ""},
		{"a server that never answers", []string{"get", "keystoneapis", "-s", mute, "--insecure-skip-tls-verify", "--request-timeout=2s"},
			[]string{"tree", "-s", mute, "--insecure-skip-tls-verify", "--request-timeout=2s"}, "Unable to connect to the server: "},
		{"a server whose name does not resolve", []string{"get", "keystoneapis", "-s", "https://no-such-host.invalid:6443", "--request-timeout=2s"},
			[]string{"tree", "-s", "https://no-such-host.invalid:6443", "--request-timeout=2s"}, "Unable to connect to the server: "},
		{"TYPE NAME", []string{"get", "keystoneservice", "glance", "-n", "openstack"},
			[]string{"tree", "keystoneservice", "glance", "-n", "openstack"}, ""},
		{"the plural, qualified by the group", []string{"get", "keystoneservices.keystone.openstack.org/glance", "-n", "openstack"},
			[]string{"tree", "keystoneservices.keystone.openstack.org/glance", "-n", "openstack"}, ""},
		{"the kind", []string{"get", "KeystoneService", "glance", "-n", "openstack"},
			[]string{"tree", "KeystoneService", "glance", "-n", "openstack"}, ""},
		{"the short name", []string{"get", "appcred/ac-glance", "-n", "openstack"}, []string{"tree", "appcred/ac-glance", "-n", "openstack"}, ""},
		{"version and group", []string{"get", "keystoneapplicationcredentials.v1beta1.keystone.openstack.org", "ac-glance", "-n", "openstack"},
			[]string{"tree", "keystoneapplicationcredentials.v1beta1.keystone.openstack.org", "ac-glance", "-n", "openstack"}, ""},
	} {
		want, got := byKubectl(tc.kubectl...), byPlugin(tc.tree...)
		if tc.upTo != "" {
			g.Expect(want.lastErrLine).To(HavePrefix(tc.upTo), "%s: kubectl %v", tc.what, tc.kubectl)
			want.lastErrLine, got.lastErrLine = tc.upTo, got.lastErrLine[:min(len(got.lastErrLine), len(tc.upTo))]
		}
		g.Expect(got).To(Equal(want), "%s: kubectl %v", tc.what, tc.kubectl)
	}
}
