package keystoneendpoint

import (
	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/reasons"
)

// endpointFailed is the registration step's reason (Error) for a request Keystone refused.
var endpointFailed = reasons.Of(keystonev1.EndpointFailedReason)
