package keystoneapi

import (
	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
)

// KeystoneAPI's own reasons take their severity from the API's catalogue.
var (
	fernetCreated     = reason(keystonev1.FernetCreatedReason)
	invalidAnnotation = reason(keystonev1.InvalidAnnotationReason)
)

func reason(name lc.Reason) condition.Reason {
	return condition.Reason{Name: name, Severity: keystonev1.ReasonSeverity[name]}
}
