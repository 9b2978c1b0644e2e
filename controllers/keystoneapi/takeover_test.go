package keystoneapi

import (
	"testing"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/openstack-k8s-operators/lib-common/modules/common/util"
)

func TestUpstreamRecorded(t *testing.T) {
	upstream, err := util.ObjectHash(map[string]string{"job": "db-sync"}) // keystone-operator's encoding
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, recorded string
		want           bool
	}{
		{"nothing recorded", "", false},
		{"this suite's digest", deploy.Hash(map[string]string{"config": "c", "image": "i"}), false},
		{"keystone-operator's digest", upstream, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := &keystonev1.KeystoneAPI{Status: keystonev1.KeystoneAPIStatus{Hash: map[string]string{deploy.HashDBSync: tc.recorded}}}
			if got := upstreamRecorded(api, deploy.HashDBSync); got != tc.want {
				t.Errorf("upstreamRecorded(%q) = %v, want %v", tc.recorded, got, tc.want)
			}
		})
	}
}
