package keystoneservice

import (
	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/reasons"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
)

// failedReasons are the registration steps' reasons (Error) for a request Keystone
// refused, which will not succeed by itself.
var failedReasons = map[lc.Type]condition.Reason{
	keystonev1.KeystoneServiceServiceReady:        reasons.Of(keystonev1.ServiceFailedReason),
	keystonev1.KeystoneServiceUserReady:           reasons.Of(keystonev1.UserFailedReason),
	keystonev1.KeystoneServiceRolesReady:          reasons.Of(keystonev1.RoleFailedReason),
	keystonev1.KeystoneServiceRoleAssignmentReady: reasons.Of(keystonev1.AssignUserRoleFailedReason),
}
