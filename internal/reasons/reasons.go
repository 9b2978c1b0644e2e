package reasons

import (
	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
)

var catalogue = condition.Catalogue(keystonev1.ReasonSeverity)

// Of declares the API's reason name with its severity; it panics on a name the API does
// not catalogue.
func Of(name lc.Reason) condition.Reason { return catalogue.Reason(name) }
