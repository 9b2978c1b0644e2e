package main

import (
	"bytes"
	"context"
	"io"
	"testing"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/cmd/manager"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestParse(t *testing.T) {
	g := NewWithT(t)
	opts, err := parse([]string{"tree", "keystoneservice/glance", "-n", "openstack", "--show-conditions=all", "-o", "json"}, io.Discard)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(opts).To(Equal(options{command: "tree", namespace: "openstack", show: "all", output: "json", target: "keystoneservice/glance"}),
		"flags after KIND/NAME, as kubectl takes them")
	opts, err = parse([]string{"tree"}, io.Discard)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(opts).To(Equal(options{command: "tree", show: "blocking", output: "text"}))
	opts, err = parse([]string{"handback", "-n", "openstack"}, io.Discard)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(opts.apply).To(BeFalse(), "a dry run unless --apply")
	opts, err = parse([]string{"handback", "--apply", "-n", "openstack"}, io.Discard)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(opts).To(Equal(options{command: "handback", namespace: "openstack", show: "blocking", output: "text", apply: true}))

	for wantErr, args := range map[string][]string{
		"the commands are tree and handback": {"describe"},
		"handback takes no KIND/NAME, not [keystoneservice/glance]: it hands back the whole namespace": {"handback", "keystoneservice/glance"},
		`--show-conditions "some": blocking or all`:                                                    {"tree", "--show-conditions", "some"},
		`-o "yaml": text or json`:              {"tree", "-o", "yaml"},
		"one KIND/NAME at most, not [a/b c/d]": {"tree", "a/b", "c/d"},
	} {
		_, err := parse(args, io.Discard)
		g.Expect(err).To(MatchError(wantErr))
	}
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
