package keystoneapplicationcredential

import (
	"testing"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/openstack-k8s-operators/lib-common/modules/common/util"
)

// upstreamSecurityHash is keystone-operator's ComputeSecurityHash (internal/keystone),
// written out here as it reads: lib-common's ObjectHash of roles, access rules and the
// unrestricted flag, in that order and under those names.
func upstreamSecurityHash(t *testing.T, spec keystonev1.KeystoneApplicationCredentialSpec) string {
	t.Helper()
	h, err := util.ObjectHash(struct {
		Roles        []string
		AccessRules  []keystonev1.ACRule
		Unrestricted bool
	}{Roles: spec.Roles, AccessRules: spec.AccessRules, Unrestricted: spec.Unrestricted})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestSecurityChanged(t *testing.T) {
	spec := keystonev1.KeystoneApplicationCredentialSpec{UserName: "nova", Roles: []string{"admin", "service"},
		AccessRules: []keystonev1.ACRule{{Service: "compute", Path: "/v2.1/servers", Method: "GET"}}}
	other := spec
	other.Roles = []string{"service"}
	unrestricted := spec
	unrestricted.Unrestricted = true
	for _, tc := range []struct {
		name     string
		recorded string
		want     bool
	}{
		{"nothing recorded (keystone-operator before securityHash)", "", false},
		{"keystone-operator's hash of the same fields", upstreamSecurityHash(t, spec), false},
		{"this suite's earlier hex digest of the same fields", legacySecurityHash(spec), false},
		{"what securityHash records", securityHash(spec), false},
		{"keystone-operator's hash of other roles", upstreamSecurityHash(t, other), true},
		{"this suite's earlier digest of other roles", legacySecurityHash(other), true},
		{"unrestricted turned on", upstreamSecurityHash(t, unrestricted), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := securityChanged(tc.recorded, spec); got != tc.want {
				t.Errorf("securityChanged(%q) = %v, want %v", tc.recorded, got, tc.want)
			}
		})
	}
}
