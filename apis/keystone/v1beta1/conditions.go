package v1beta1

import (
	"github.com/openstack-k8s-operators/lib-common/modules/common/condition"
)

// Step conditions of KeystoneAPI, in declared order (docs/conditions.md). The types
// lib-common already names are reused so that dependent operators find them.
const (
	// KeystoneAPIInputReady: the admin password Secret and key exist.
	KeystoneAPIInputReady = condition.InputReadyCondition
	// KeystoneAPIServiceAccountReady: the pods' ServiceAccount exists with a Role, bound
	// to it, that may use the SecurityContextConstraints nonroot-v2 (OpenShift; anyuid where the operator may grant only that); the names
	// are keystone-operator's: keystone-<name>, -role, -rolebinding.
	KeystoneAPIServiceAccountReady = condition.ServiceAccountReadyCondition
	// KeystoneAPITLSInputReady: the certificate Secrets of the interfaces and the CA
	// bundle exist and parse (skipped when the spec has no tls).
	KeystoneAPITLSInputReady = condition.TLSInputReadyCondition
	// KeystoneAPITopologyReady: the Topology of topologyRef exists and is held for the
	// pods (skipped without topologyRef).
	KeystoneAPITopologyReady = condition.TopologyReadyCondition
	// KeystoneAPIDBReady mirrors the MariaDBDatabase.
	KeystoneAPIDBReady = condition.DBReadyCondition
	// KeystoneAPIMemcachedReady mirrors the Memcached.
	KeystoneAPIMemcachedReady = condition.MemcachedReadyCondition
	// KeystoneAPIRabbitMqTransportURLReady mirrors the TransportURL of the
	// notifications (skipped without notificationsBus or rabbitMqClusterName).
	KeystoneAPIRabbitMqTransportURLReady = condition.RabbitMqTransportURLReadyCondition
	// KeystoneAPIServiceConfigReady: the configuration is rendered into its Secret.
	KeystoneAPIServiceConfigReady = condition.ServiceConfigReadyCondition
	// KeystoneAPIFernetKeysReady: the fernet and credential keys exist.
	KeystoneAPIFernetKeysReady condition.Type = "FernetKeysReady"
	// KeystoneAPIDBSyncReady: the db-sync job succeeded for the current configuration.
	KeystoneAPIDBSyncReady = condition.DBSyncReadyCondition
	// KeystoneAPIExposeServiceReady: the public and internal Services exist.
	KeystoneAPIExposeServiceReady = condition.ExposeServiceReadyCondition
	// KeystoneAPIBootstrapReady: the bootstrap job succeeded.
	KeystoneAPIBootstrapReady = condition.BootstrapReadyCondition
	// KeystoneAPIDeploymentReady: the deployment rolled out.
	KeystoneAPIDeploymentReady = condition.DeploymentReadyCondition
	// KeystoneAPIPDBReady: the API pods' PodDisruptionBudget exists from two replicas on
	// (a drain evicts one at a time), and none below.
	KeystoneAPIPDBReady = condition.PDBReadyCondition
	// KeystoneAPINetworkAttachmentsReady: every pod reports an address on each of
	// networkAttachments (skipped without them).
	KeystoneAPINetworkAttachmentsReady = condition.NetworkAttachmentsReadyCondition
	// KeystoneAPICronJobReady: the CronJob running keystone-manage trust_flush exists
	// with the spec's schedule.
	KeystoneAPICronJobReady = condition.CronJobReadyCondition
	// KeystoneAPIEndpointReady: in external mode, the admin can authenticate at the
	// internal override URL.
	KeystoneAPIEndpointReady condition.Type = "KeystoneEndpointReady"
	// KeystoneAPIOpenStackConfigReady: the ConfigMap openstack-config (clouds.yaml) and
	// the Secret openstack-config-secret (secure.yaml, cloudrc) hold the admin's cloud.
	KeystoneAPIOpenStackConfigReady condition.Type = "OpenStackConfigReady"
)

// KeystoneAPIRegistrationsReady is reported beside KeystoneAPI's steps and is not one:
// whether every KeystoneService, KeystoneEndpoint and KeystoneApplicationCredential of
// the namespace is Ready and, when one is not, which (the most severe first: Error, then
// Warning), with its Ready reason, severity and message. It never gates Ready, Stalled or
// Reconciling: the registrations are what wait for the KeystoneAPI.
const KeystoneAPIRegistrationsReady condition.Type = "RegistrationsReady"

// KeystoneAPISteps lists the step conditions of KeystoneAPI in declared order.
var KeystoneAPISteps = []condition.Type{
	KeystoneAPIInputReady,
	KeystoneAPIServiceAccountReady,
	KeystoneAPITLSInputReady,
	KeystoneAPITopologyReady,
	KeystoneAPIDBReady,
	KeystoneAPIMemcachedReady,
	KeystoneAPIRabbitMqTransportURLReady,
	KeystoneAPIServiceConfigReady,
	KeystoneAPIFernetKeysReady,
	KeystoneAPIDBSyncReady,
	KeystoneAPIExposeServiceReady,
	KeystoneAPIBootstrapReady,
	KeystoneAPIDeploymentReady,
	KeystoneAPIPDBReady,
	KeystoneAPINetworkAttachmentsReady,
	KeystoneAPICronJobReady,
	KeystoneAPIEndpointReady,
	KeystoneAPIOpenStackConfigReady,
}

// Step conditions of KeystoneService, in declared order.
const (
	// KeystoneServiceKeystoneAPIReady mirrors the namespace's KeystoneAPI.
	KeystoneServiceKeystoneAPIReady condition.Type = "KeystoneAPIReady"
	// KeystoneServiceInputReady: the service user's password Secret and key exist.
	KeystoneServiceInputReady = condition.InputReadyCondition
	// KeystoneServiceServiceReady: the service is registered.
	KeystoneServiceServiceReady condition.Type = "KeystoneServiceReady"
	// KeystoneServiceUserReady: the service user exists with the current password.
	KeystoneServiceUserReady condition.Type = "ServiceUserReady"
	// KeystoneServiceRolesReady: the roles exist.
	KeystoneServiceRolesReady condition.Type = "RolesReady"
	// KeystoneServiceRoleAssignmentReady: the roles are assigned to the service user.
	KeystoneServiceRoleAssignmentReady condition.Type = "RoleAssignmentReady"
)

// KeystoneServiceSteps lists the step conditions of KeystoneService in declared order.
var KeystoneServiceSteps = []condition.Type{
	KeystoneServiceKeystoneAPIReady,
	KeystoneServiceInputReady,
	KeystoneServiceServiceReady,
	KeystoneServiceUserReady,
	KeystoneServiceRolesReady,
	KeystoneServiceRoleAssignmentReady,
}

// Step conditions of KeystoneEndpoint, in declared order.
const (
	// KeystoneEndpointKeystoneAPIReady mirrors the namespace's KeystoneAPI.
	KeystoneEndpointKeystoneAPIReady condition.Type = "KeystoneAPIReady"
	// KeystoneEndpointServiceReady mirrors the KeystoneService of spec.serviceName
	// (the type lib-common names for a mirrored KeystoneService).
	KeystoneEndpointServiceReady = condition.KeystoneServiceReadyCondition
	// KeystoneEndpointEndpointsReady: the spec's endpoints are registered in the
	// KeystoneAPI's region (keystone-operator's name for this condition).
	KeystoneEndpointEndpointsReady condition.Type = "KeystoneServiceOSEndpointsReady"
)

// KeystoneEndpointSteps lists the step conditions of KeystoneEndpoint in declared order.
var KeystoneEndpointSteps = []condition.Type{
	KeystoneEndpointKeystoneAPIReady,
	KeystoneEndpointServiceReady,
	KeystoneEndpointEndpointsReady,
}

// Step conditions of KeystoneApplicationCredential, in declared order.
const (
	// KeystoneApplicationCredentialKeystoneAPIReady mirrors the namespace's KeystoneAPI.
	KeystoneApplicationCredentialKeystoneAPIReady condition.Type = "KeystoneAPIReady"
	// KeystoneApplicationCredentialInputReady: the user's password Secret and key exist.
	KeystoneApplicationCredentialInputReady = condition.InputReadyCondition
	// KeystoneApplicationCredentialCredentialReady: the current credential exists in
	// Keystone with the spec's roles and access rules (keystone-operator's name).
	KeystoneApplicationCredentialCredentialReady condition.Type = "KeystoneApplicationCredentialReady"
	// KeystoneApplicationCredentialSecretReady: the current credential's Secret holds
	// AC_ID and AC_SECRET.
	KeystoneApplicationCredentialSecretReady condition.Type = "ApplicationCredentialSecretReady"
	// KeystoneApplicationCredentialRotationReady: the credential is replaced on schedule.
	KeystoneApplicationCredentialRotationReady condition.Type = "ApplicationCredentialRotationReady"
	// KeystoneApplicationCredentialCleanupReady: the credential before the last rotation
	// is kept exactly while a consumer still uses its Secret, then revoked.
	KeystoneApplicationCredentialCleanupReady condition.Type = "ApplicationCredentialCleanupReady"
)

// KeystoneApplicationCredentialPreviousReleased is reported beside the steps, and is not
// one, while a credential replaced by a rotation is kept because a consumer's finalizer
// or the data plane still holds it: True while that is recent, False (CredentialHeld,
// Warning) once it has lasted longer than a day (at most half the grace period), naming
// who holds it. It never gates Ready: the current credential works.
const KeystoneApplicationCredentialPreviousReleased condition.Type = "PreviousCredentialReleased"

// KeystoneApplicationCredentialSteps lists the step conditions of
// KeystoneApplicationCredential in declared order.
var KeystoneApplicationCredentialSteps = []condition.Type{
	KeystoneApplicationCredentialKeystoneAPIReady,
	KeystoneApplicationCredentialInputReady,
	KeystoneApplicationCredentialCredentialReady,
	KeystoneApplicationCredentialSecretReady,
	KeystoneApplicationCredentialRotationReady,
	KeystoneApplicationCredentialCleanupReady,
}

// Reasons specific to Keystone (docs/conditions.md); the generic ones are lib-common's.
const (
	FernetCreatedReason condition.Reason = "FernetCreated"
	// InvalidAnnotationReason: an annotation the operator reads holds a value it cannot
	// read; it goes on without it and says so (Warning).
	InvalidAnnotationReason condition.Reason = "InvalidAnnotation"
	// InvalidCertificateReason: a TLS Secret holds a certificate, key or CA bundle that
	// does not parse, or a key that does not match its certificate (Warning: the
	// issuer may rewrite it).
	InvalidCertificateReason    condition.Reason = "InvalidCertificate"
	ServiceCreatedReason        condition.Reason = "ServiceCreated"
	ServiceFailedReason         condition.Reason = "ServiceFailed"
	EndpointCreatedReason       condition.Reason = "EndpointCreated"
	EndpointFailedReason        condition.Reason = "EndpointFailed"
	UserCreatedReason           condition.Reason = "UserCreated"
	UserFailedReason            condition.Reason = "UserFailed"
	RoleCreatedReason           condition.Reason = "RoleCreated"
	RoleFailedReason            condition.Reason = "RoleFailed"
	AssignUserRoleCreatedReason condition.Reason = "AssignUserRoleCreated"
	AssignUserRoleFailedReason  condition.Reason = "AssignUserRoleFailed"
	// ApplicationCredentialCreatedReason: a credential was created this round (Info).
	ApplicationCredentialCreatedReason condition.Reason = "ApplicationCredentialCreated"
	// ApplicationCredentialFailedReason: Keystone refused to create the credential (Error).
	ApplicationCredentialFailedReason condition.Reason = "ApplicationCredentialFailed"
	// UserAuthenticationFailedReason: Keystone refused the user's name and password; the
	// user may not exist yet, or its password not be set yet (Warning).
	UserAuthenticationFailedReason condition.Reason = "UserAuthenticationFailed"
	// RoleNotAssignedReason: Keystone refused a credential with a role its user lacks on
	// the service project; the user's KeystoneService may still be assigning it (Warning).
	RoleNotAssignedReason condition.Reason = "RoleNotAssigned"
	// ApplicationCredentialRotatedReason: a new credential replaced the current one this round (Info).
	ApplicationCredentialRotatedReason condition.Reason = "ApplicationCredentialRotated"
	// ApplicationCredentialRevokedReason: the previous credential was revoked this round (Info).
	ApplicationCredentialRevokedReason condition.Reason = "ApplicationCredentialRevoked"
	// SecretCreatedReason: the credential's Secret was created this round (Info).
	SecretCreatedReason condition.Reason = "SecretCreated"
	// CredentialHeldReason: a credential replaced by a rotation is still held by its
	// consumers long after (Warning).
	CredentialHeldReason condition.Reason = "CredentialHeld" //nolint:gosec // a condition reason, not a credential
	// PasswordConflictReason: a service user shared by several KeystoneServices has a
	// password other than the one in this KeystoneService's Secret; the KeystoneService
	// that set it is named (Warning: the Secrets may yet agree).
	PasswordConflictReason condition.Reason = "PasswordConflict"
	// NotAllowedReason: the namespace's KeystoneAPI does not let its registrations ask
	// for this (spec.registrationPolicy), or it is Keystone's admin user; nothing is
	// written to Keystone (Error: the spec or the KeystoneAPI must change).
	NotAllowedReason condition.Reason = "NotAllowed"
)

// ReasonSeverity gives each Keystone-specific reason its one severity: Created
// reasons are progress (Info), Failed reasons will not fix themselves (Error).
var ReasonSeverity = map[condition.Reason]condition.Severity{
	FernetCreatedReason:         condition.SeverityInfo,
	InvalidAnnotationReason:     condition.SeverityWarning,
	InvalidCertificateReason:    condition.SeverityWarning,
	ServiceCreatedReason:        condition.SeverityInfo,
	ServiceFailedReason:         condition.SeverityError,
	EndpointCreatedReason:       condition.SeverityInfo,
	EndpointFailedReason:        condition.SeverityError,
	UserCreatedReason:           condition.SeverityInfo,
	UserFailedReason:            condition.SeverityError,
	RoleCreatedReason:           condition.SeverityInfo,
	RoleFailedReason:            condition.SeverityError,
	AssignUserRoleCreatedReason: condition.SeverityInfo,
	AssignUserRoleFailedReason:  condition.SeverityError,

	ApplicationCredentialCreatedReason: condition.SeverityInfo,
	ApplicationCredentialFailedReason:  condition.SeverityError,
	UserAuthenticationFailedReason:     condition.SeverityWarning,
	RoleNotAssignedReason:              condition.SeverityWarning,
	ApplicationCredentialRotatedReason: condition.SeverityInfo,
	ApplicationCredentialRevokedReason: condition.SeverityInfo,
	SecretCreatedReason:                condition.SeverityInfo,
	CredentialHeldReason:               condition.SeverityWarning,
	PasswordConflictReason:             condition.SeverityWarning,
	NotAllowedReason:                   condition.SeverityError,
}
