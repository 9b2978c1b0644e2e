package keystoneservice

import (
	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/controllers/registration"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
)

// Each registration step reports its work with a Created reason (Info) and a
// failure that will not fix itself with a Failed reason (Error).
var stepReasons = map[lc.Type]registration.StepReasons{
	keystonev1.KeystoneServiceServiceReady: {
		Created: registration.Reason(keystonev1.ServiceCreatedReason), Failed: registration.Reason(keystonev1.ServiceFailedReason)},
	keystonev1.KeystoneServiceUserReady: {
		Created: registration.Reason(keystonev1.UserCreatedReason), Failed: registration.Reason(keystonev1.UserFailedReason)},
	keystonev1.KeystoneServiceRolesReady: {
		Created: registration.Reason(keystonev1.RoleCreatedReason), Failed: registration.Reason(keystonev1.RoleFailedReason)},
	keystonev1.KeystoneServiceRoleAssignmentReady: {
		Created: registration.Reason(keystonev1.AssignUserRoleCreatedReason), Failed: registration.Reason(keystonev1.AssignUserRoleFailedReason)},
}
