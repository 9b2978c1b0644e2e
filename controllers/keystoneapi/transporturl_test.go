package keystoneapi

import (
	"testing"

	. "github.com/onsi/gomega"
	rabbitmqv1 "github.com/openstack-k8s-operators/infra-operator/apis/rabbitmq/v1beta1"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTransportURLVerdict(t *testing.T) {
	tu := func(conds lc.Conditions, secret string) *rabbitmqv1.TransportURL {
		return &rabbitmqv1.TransportURL{ObjectMeta: metav1.ObjectMeta{Name: "keystone-keystone-transport"},
			Status: rabbitmqv1.TransportURLStatus{Conditions: conds, SecretName: secret}}
	}
	tests := []struct {
		name    string
		tu      *rabbitmqv1.TransportURL
		problem string
		want    verdictOf
	}{
		{"requested", tu(nil, ""), "", verdictOf{false, "Requested", lc.SeverityInfo,
			"TransportURL keystone-keystone-transport: waiting for its status"}},
		{"failing", tu(failing, ""), "", verdictOf{false, "ErrorReason", lc.SeverityError, "TransportURL keystone-keystone-transport: broken"}},
		{"ready, no secret named yet", tu(isReady, ""), "", verdictOf{false, "Requested", lc.SeverityInfo,
			"TransportURL keystone-keystone-transport: waiting for its secret"}},
		{"its secret without the URL", tu(isReady, "rabbitmq-transport-url"), "secret rabbitmq-transport-url has no key transport_url",
			verdictOf{false, "DependencyNotFound", lc.SeverityWarning,
				"TransportURL keystone-keystone-transport: secret rabbitmq-transport-url has no key transport_url"}},
		{"ready", tu(isReady, "rabbitmq-transport-url"), "", verdictOf{true, "", "",
			"notifications go to RabbitMQ cluster rabbitmq through TransportURL keystone-keystone-transport"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(brief(transportURLVerdict(tt.tu, "rabbitmq", tt.problem))).To(Equal(tt.want))
		})
	}
}
