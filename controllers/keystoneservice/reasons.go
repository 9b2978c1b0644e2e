package keystoneservice

import (
	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
)

// reason takes a Keystone-specific reason's severity from the API's catalogue.
func reason(name lc.Reason) condition.Reason {
	return condition.Reason{Name: name, Severity: keystonev1.ReasonSeverity[name]}
}

// Each registration step reports its work with a Created reason (Info) and a
// failure that will not fix itself with a Failed reason (Error).
var stepReasons = map[lc.Type]struct{ created, failed condition.Reason }{
	keystonev1.KeystoneServiceServiceReady:        {reason(keystonev1.ServiceCreatedReason), reason(keystonev1.ServiceFailedReason)},
	keystonev1.KeystoneServiceEndpointsReady:      {reason(keystonev1.EndpointCreatedReason), reason(keystonev1.EndpointFailedReason)},
	keystonev1.KeystoneServiceUserReady:           {reason(keystonev1.UserCreatedReason), reason(keystonev1.UserFailedReason)},
	keystonev1.KeystoneServiceRolesReady:          {reason(keystonev1.RoleCreatedReason), reason(keystonev1.RoleFailedReason)},
	keystonev1.KeystoneServiceRoleAssignmentReady: {reason(keystonev1.AssignUserRoleCreatedReason), reason(keystonev1.AssignUserRoleFailedReason)},
}
