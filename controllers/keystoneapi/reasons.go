package keystoneapi

import (
	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/reasons"
)

// KeystoneAPI's own reasons.
var (
	fernetCreated      = reasons.Of(keystonev1.FernetCreatedReason)
	invalidAnnotation  = reasons.Of(keystonev1.InvalidAnnotationReason)
	invalidCertificate = reasons.Of(keystonev1.InvalidCertificateReason)
)
