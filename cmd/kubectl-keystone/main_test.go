package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/cmd/manager"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestParse(t *testing.T) {
	g := NewWithT(t)
	opts, err := parse([]string{"tree", "keystoneservice/glance", "-n", "openstack", "--show-conditions=all", "-o", "json"}, io.Discard, io.Discard)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(opts).To(Equal(options{command: "tree", namespace: "openstack", show: "all", output: "json", target: "keystoneservice/glance"}),
		"flags after KIND/NAME, as kubectl takes them")
	opts, err = parse([]string{"tree"}, io.Discard, io.Discard)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(opts).To(Equal(options{command: "tree", show: "blocking", output: "text"}))
	opts, err = parse([]string{"handback", "-n", "openstack"}, io.Discard, io.Discard)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(opts.apply).To(BeFalse(), "a dry run unless --apply")
	opts, err = parse([]string{"handback", "--apply", "-n", "openstack"}, io.Discard, io.Discard)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(opts).To(Equal(options{command: "handback", namespace: "openstack", show: "blocking", output: "text", apply: true}))

	for wantErr, args := range map[string][]string{
		"the commands are tree and handback": {"describe"},
		"handback takes no KIND/NAME, not [keystoneservice/glance]: it hands back the whole namespace": {"handback", "keystoneservice/glance"},
		`--show-conditions "some": blocking or all`:                                                    {"tree", "--show-conditions", "some"},
		`-o "wide": text, json or yaml`:                                                                {"tree", "-o", "wide"},
		"one KIND/NAME at most, not [a/b c/d]":                                                         {"tree", "a/b", "c/d"},
	} {
		_, err := parse(args, io.Discard, io.Discard)
		g.Expect(err).To(MatchError(wantErr))
	}
}

// TestHelpAndErrors: help, asked for in any of kubectl's ways, is printed on stdout and
// is no error (exit 0); -o yaml is taken; errors say what to do.
func TestHelpAndErrors(t *testing.T) {
	g := NewWithT(t)
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}, {"tree", "--help"}, {"handback", "-h"}} {
		var out, errOut bytes.Buffer
		g.Expect(run(args, &out, &errOut)).To(Succeed(), "%v", args)
		g.Expect(out.String()).To(ContainSubstring("kubectl keystone tree"), "%v: usage on stdout", args)
		g.Expect(out.String()).NotTo(ContainSubstring("  -"+"help"), "%v", args)
	}
	opts, err := parse([]string{"tree", "--output", "yaml"}, io.Discard, io.Discard)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(opts.output).To(Equal("yaml"))

	noMatch := &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: "keystone.openstack.org", Kind: "KeystoneAPI"}}
	g.Expect(explain(fmt.Errorf("listing KeystoneAPIs: %w", noMatch))).To(HavePrefix(
		"the Keystone CRDs are not installed in this cluster (kubectl get crd keystoneapis.keystone.openstack.org)"))
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "keystone.openstack.org", Resource: "keystoneapis"}, "", errors.New("no"))
	g.Expect(explain(forbidden)).To(HavePrefix("forbidden: your user may not read this"))
}

// TestHandBackDryRun: without --apply the hand-back prints what it would change and
// changes nothing; with it, the changes are made and a second run finds nothing.
func TestHandBackDryRun(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	svc := &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Name: "glance", Namespace: "openstack",
		Finalizers: []string{"keystone.openstack.org/keystoneservice"}}}
	c := fake.NewClientBuilder().WithScheme(manager.Scheme).WithObjects(svc).Build()
	var out bytes.Buffer
	g.Expect(handBack(ctx, c, options{namespace: "openstack"}, &out)).To(Succeed())
	g.Expect(out.String()).To(Equal("namespace openstack: would change (dry run; --apply changes it):\n" +
		"  KeystoneService/glance: remove finalizers keystone.openstack.org/keystoneservice; add keystone-operator's openstack.org/keystoneservice\n"))
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(svc), svc)).To(Succeed())
	g.Expect(svc.Finalizers).To(Equal([]string{"keystone.openstack.org/keystoneservice"}), "a dry run changes nothing")

	out.Reset()
	g.Expect(handBack(ctx, c, options{namespace: "openstack", apply: true}, &out)).To(Succeed())
	g.Expect(out.String()).To(HavePrefix("namespace openstack: changed:\n"))
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(svc), svc)).To(Succeed())
	g.Expect(svc.Finalizers).To(Equal([]string{"openstack.org/keystoneservice"}))
	out.Reset()
	g.Expect(handBack(ctx, c, options{namespace: "openstack", apply: true}, &out)).To(Succeed())
	g.Expect(out.String()).To(Equal("namespace openstack: nothing of this operator's is left; keystone-operator can run\n"))
}
