// Package install checks the hand-made install as a user runs it, with the Makefile's
// own targets, kustomize and kubectl against a real API server: make deploy IMG=...,
// again, a later kubectl apply -k config/default, and make build-installer's file.
package install

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/keystone-stepwise/keystone-operator/tests/support/controlplane"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const deployment = "keystone-stepwise-controller-manager"

// copyConfig copies config/ of root into a new directory, where make may edit it.
func copyConfig(t *testing.T, root string) string {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command("cp", "-r", filepath.Join(root, "config"), dir).CombinedOutput()
	if err != nil {
		t.Fatalf("copying config/: %v: %s", err, out)
	}
	return dir
}

// TestDeployKeepsImage: make deploy IMG=... runs that image, a second make deploy with
// another image runs that one, and a later kubectl apply -k config/default (a user
// re-applying, as docs/keystone-operator.md says) keeps it; make build-installer's
// dist/install.yaml holds the CRDs and the image, and applies.
func TestDeployKeepsImage(t *testing.T) {
	g := NewWithT(t)
	root, err := controlplane.RepoRoot()
	g.Expect(err).NotTo(HaveOccurred())
	cp := controlplane.Start(t, root)
	cfg, kubeconfig, kubectl := cp.Config, cp.Kubeconfig, cp.Kubectl
	kust := controlplane.Kustomize(t, root)
	c, err := client.New(cfg, client.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	work := copyConfig(t, root)

	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		return string(out)
	}
	// The Makefile's own targets, in a copy of config/ (make deploy edits it), the
	// generation of the manifests taken as done (-o manifests).
	makeTarget := func(target, image string) string {
		return run("make", "-f", filepath.Join(root, "Makefile"), "-o", "manifests", target, "IMG="+image, "KUBECTL="+kubectl, "KUSTOMIZE="+kust)
	}
	image := func() string {
		d := &appsv1.Deployment{}
		g.Expect(c.Get(context.Background(), types.NamespacedName{Namespace: "keystone-operator-system", Name: deployment}, d)).To(Succeed())
		return d.Spec.Template.Spec.Containers[0].Image
	}

	makeTarget("deploy", "registry.example/keystone-operator:v1")
	g.Expect(image()).To(Equal("registry.example/keystone-operator:v1"))
	makeTarget("deploy", "registry.example/keystone-operator:v2")
	g.Expect(image()).To(Equal("registry.example/keystone-operator:v2"), "a second make deploy runs its image")
	run(kubectl, "apply", "--server-side", "--force-conflicts", "-k", "config/default")
	g.Expect(image()).To(Equal("registry.example/keystone-operator:v2"), "re-applying config/default keeps make deploy's image")

	makeTarget("build-installer", "registry.example/keystone-operator:v3")
	installer, err := os.ReadFile(filepath.Join(work, "dist", "install.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(installer)).To(ContainSubstring("kind: CustomResourceDefinition"))
	g.Expect(strings.Count(string(installer), "image: registry.example/keystone-operator:v3")).To(Equal(1))
	run(kubectl, "apply", "--server-side", "--force-conflicts", "-f", filepath.Join(work, "dist", "install.yaml"))
	g.Expect(image()).To(Equal("registry.example/keystone-operator:v3"), "the installer runs its image")
}
