package keystoneapi

import (
	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
)

// fernetCreated takes its severity from the API's catalogue.
var fernetCreated = condition.Reason{
	Name:     keystonev1.FernetCreatedReason,
	Severity: keystonev1.ReasonSeverity[keystonev1.FernetCreatedReason],
}
