package main

import (
	"io"
	"testing"

	. "github.com/onsi/gomega"
)

func TestParse(t *testing.T) {
	g := NewWithT(t)
	opts, err := parse([]string{"tree", "keystoneservice/glance", "-n", "openstack", "--show-conditions=all", "-o", "json"}, io.Discard)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(opts).To(Equal(options{namespace: "openstack", show: "all", output: "json", target: "keystoneservice/glance"}),
		"flags after KIND/NAME, as kubectl takes them")
	opts, err = parse([]string{"tree"}, io.Discard)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(opts).To(Equal(options{show: "blocking", output: "text"}))

	for wantErr, args := range map[string][]string{
		"the only command is tree":                  {"describe"},
		`--show-conditions "some": blocking or all`: {"tree", "--show-conditions", "some"},
		`-o "yaml": text or json`:                   {"tree", "-o", "yaml"},
		"one KIND/NAME at most, not [a/b c/d]":      {"tree", "a/b", "c/d"},
	} {
		_, err := parse(args, io.Discard)
		g.Expect(err).To(MatchError(wantErr))
	}
}
