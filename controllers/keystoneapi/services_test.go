package keystoneapi

import (
	"errors"
	"testing"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestExposeVerdict(t *testing.T) {
	api := &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Namespace: "openstack"}}
	tests := []struct {
		name    string
		invalid error
		pending []string
		waiting string
		want    verdictOf
	}{
		{"an override the Services cannot be built from", errors.New("override.service.public: bad"), nil, "",
			verdictOf{false, "InvalidInput", lc.SeverityError, "override.service.public: bad"}},
		{"a LoadBalancer without an address", nil, []string{"keystone-public", "keystone-internal"}, "", verdictOf{false, "Requested",
			lc.SeverityInfo, "LoadBalancer service keystone-public and keystone-internal has no address yet"}},
		{"exposed", nil, nil, "", verdictOf{true, "", "", "services keystone-public and keystone-internal expose port 5000"}},
		{"observed while an earlier step waits", nil, nil, "(updated once DBReady is True)", verdictOf{true, "", "",
			"services keystone-public and keystone-internal expose port 5000 (updated once DBReady is True)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(brief(exposeVerdict(api, tt.invalid, tt.pending, tt.waiting))).To(Equal(tt.want))
		})
	}
}
