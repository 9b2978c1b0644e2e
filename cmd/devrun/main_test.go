package main

import (
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/client-go/tools/clientcmd"
)

// TestCurrent: make run runs against the kubeconfig kubectl would use, KUBECONFIG else
// ~/.kube/config, when it names a current context; else against a local cluster.
func TestCurrent(t *testing.T) {
	g := NewWithT(t)
	home := t.TempDir()
	// client-go reads $HOME once, at start: its ~/.kube/config is pointed here.
	recommended := clientcmd.RecommendedHomeFile
	clientcmd.RecommendedHomeFile = filepath.Join(home, ".kube", "config")
	t.Cleanup(func() { clientcmd.RecommendedHomeFile = recommended })
	t.Setenv("KUBECONFIG", "")
	g.Expect(current()).To(BeNil(), "no kubeconfig: a local cluster")

	write := func(path, currentContext string) {
		g.Expect(os.MkdirAll(filepath.Dir(path), 0o700)).To(Succeed())
		g.Expect(os.WriteFile(path, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: here, context: {cluster: c, user: u}}]
current-context: "`+currentContext+`"
`), 0o600)).To(Succeed())
	}
	write(filepath.Join(home, ".kube", "config"), "")
	g.Expect(current()).To(BeNil(), "~/.kube/config without a current context: none configured")
	write(filepath.Join(home, ".kube", "config"), "here")
	g.Expect(current()).NotTo(BeNil(), "~/.kube/config's current context, as kubectl uses it")
	g.Expect(current().CurrentContext).To(Equal("here"))

	other := filepath.Join(t.TempDir(), "other")
	write(other, "")
	t.Setenv("KUBECONFIG", other)
	g.Expect(current()).To(BeNil(), "KUBECONFIG wins over ~/.kube/config, as for kubectl")
}
