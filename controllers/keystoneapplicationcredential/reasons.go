package keystoneapplicationcredential

import (
	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/reasons"
)

// KeystoneApplicationCredential's own reasons.
var (
	credentialCreated        = reasons.Of(keystonev1.ApplicationCredentialCreatedReason)
	credentialFailed         = reasons.Of(keystonev1.ApplicationCredentialFailedReason)
	userAuthenticationFailed = reasons.Of(keystonev1.UserAuthenticationFailedReason)
	roleNotAssigned          = reasons.Of(keystonev1.RoleNotAssignedReason)
	rotatedReason            = reasons.Of(keystonev1.ApplicationCredentialRotatedReason)
	revokedReason            = reasons.Of(keystonev1.ApplicationCredentialRevokedReason)
	secretCreatedReason      = reasons.Of(keystonev1.SecretCreatedReason)
	credentialHeld           = reasons.Of(keystonev1.CredentialHeldReason)
)
