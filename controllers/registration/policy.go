package registration

import (
	"context"
	"fmt"
	"slices"
	"strings"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/internal/reasons"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// What a registration may ask of Keystone is what the namespace's KeystoneAPI allows
// (spec.registrationPolicy, keystonev1.RegistrationPolicy): these are the refusals,
// NotAllowed (Error), each naming the field asked with and the KeystoneAPI's setting.
// Nothing is written to Keystone for a refused request.

// NotAllowed is the reason of a request the KeystoneAPI does not allow.
var NotAllowed = reasons.Of(keystonev1.NotAllowedReason)

// UserRefusal says why field (spec.serviceUser, spec.userName) may not name user in
// api's namespace: Keystone's admin user (its name compared as Keystone compares names,
// without case), or a user spec.registrationPolicy.users does not allow; "" when it may.
func UserRefusal(api *keystonev1.KeystoneAPI, field, user string) string {
	if strings.EqualFold(user, api.Spec.AdminUser) {
		return fmt.Sprintf("%s %s is the admin user of KeystoneAPI %s, as which the operator acts: a namespace never uses it",
			field, user, api.Name)
	}
	if p := api.Policy(); !p.AllowsUser(user) {
		return fmt.Sprintf("%s %s is not among the users KeystoneAPI %s allows (%s)", field, user, api.Name, p.Setting("users"))
	}
	return ""
}

// OtherAdmins are the admin users of other namespaces' KeystoneAPIs, which a
// namespace never uses whatever its policy lets it name: the operator acts as each for
// its namespace, and a password checked on it, or a login as it, that Keystone refuses
// counts towards its lockout, which would stop that namespace (two namespaces' policies
// may both allow a name: tenant-a-* allows tenant-a-2-operator).
type OtherAdmins struct {
	// IDs are their Keystone IDs, recorded once their logins worked at the namespace's
	// Keystone (status.verifiedAdmin, which only the operator writes, with the internal
	// endpoint of the login: an ID another Keystone answered bars nothing here): barred
	// whatever name finds them, and whether or not their KeystoneAPIs are Ready now.
	IDs map[string]bool
	// names are those of the KeystoneAPIs Ready at the same Keystone (the same internal
	// endpoint) as the namespace's: where status.verifiedAdmin is pruned
	// (keystone-operator's CRD), refused by name. A KeystoneAPI that is not Ready, or of
	// another Keystone, bars no name: whoever may create one must not bar other
	// namespaces' users by naming them its admin.
	names []string
}

// ReadOtherAdmins reads the OtherAdmins of api's namespace from c (every namespace the
// operator watches).
func ReadOtherAdmins(ctx context.Context, c client.Reader, api *keystonev1.KeystoneAPI) (OtherAdmins, error) {
	var apis keystonev1.KeystoneAPIList
	// Read only: the cache's objects, not copies of every KeystoneAPI at every round.
	if err := c.List(ctx, &apis, client.UnsafeDisableDeepCopy); err != nil {
		return OtherAdmins{}, fmt.Errorf("listing the KeystoneAPIs: %w", err)
	}
	url := api.Status.APIEndpoints[keystonev1.EndpointInternal]
	var others OtherAdmins
	for i := range apis.Items {
		other := &apis.Items[i]
		if other.Namespace == api.Namespace {
			continue
		}
		if v := other.Status.VerifiedAdmin; v != nil && v.ID != "" && url != "" && v.Endpoint == url {
			if others.IDs == nil {
				others.IDs = map[string]bool{}
			}
			others.IDs[v.ID] = true
		}
		if url != "" && other.Status.APIEndpoints[keystonev1.EndpointInternal] == url && other.IsReady() {
			others.names = append(others.names, other.Spec.AdminUser)
		}
	}
	return others, nil
}

// Refusal says why field (spec.serviceUser, spec.userName) may not name user: the name,
// compared without case, of another namespace's admin (names); the message does not
// name that namespace. "" when it may (the user Keystone finds is checked against IDs).
func (o OtherAdmins) Refusal(field, user string) string {
	for _, name := range o.names {
		if strings.EqualFold(user, name) {
			return fmt.Sprintf("%s %s %s", field, user, identity.OtherAdminRefusal)
		}
	}
	return ""
}

// PasswordRefusal says why field (spec.secret) may not name, with key, where a user's
// password is read in api's namespace: where the operator reads the admin's password
// (the KeystoneAPI's spec.secret under passwordSelectors.admin), or a Secret the
// KeystoneAPI writes (writtenSecrets), whatever the key. A user given what they hold
// would let her try guesses at it as that user, and a credential logging in with it
// would tell whether a password is the one they hold; "" when it may. Secrets are
// compared by name and key, never by value: a refusal must not tell a tenant that a
// value she wrote is the admin's.
func PasswordRefusal(api *keystonev1.KeystoneAPI, field, secret, key string) string {
	if secret == api.Spec.Secret && key == api.Spec.PasswordSelectors.Admin {
		return fmt.Sprintf("%s %s with key %s holds the admin's password of KeystoneAPI %s: no user of a registration is given it",
			field, secret, key, api.Name)
	}
	if slices.Contains(writtenSecrets(api), secret) {
		return writtenRefusal(field, secret, api.Name)
	}
	return ""
}

// writtenSecrets are the names of the Secrets api writes in its namespace: the copy of
// the admin's password for cleanup, the admin's cloud configuration (openstack-config-
// secret: its cloudrc and secure.yaml hold the admin's password), its configuration, its
// keys (also under their earlier name), its database account's password. By name, which
// nobody can change, beside their controller reference (ControlledSecretRefusal), which
// whoever may patch a Secret can.
func writtenSecrets(api *keystonev1.KeystoneAPI) []string {
	return []string{deploy.CleanupSecretName(api), deploy.OpenStackConfigSecretName, deploy.ConfigSecretName(api),
		deploy.KeysSecretName(api), deploy.LegacyKeysSecretName(api), deploy.DBSecretName(api)}
}

// writtenRefusal is the refusal of field naming secret, which KeystoneAPI api writes.
func writtenRefusal(field, secret, api string) string {
	return fmt.Sprintf("%s %s is written by KeystoneAPI %s and holds its secrets: no user of a registration is given them",
		field, secret, api)
}

// ControlledSecretRefusal says why field may name secret as where a user's password is
// read: a KeystoneAPI controls it (writes it, with its controller reference), under a
// name writtenSecrets does not know (an earlier version's, keystone-operator's); "" when
// it may.
func ControlledSecretRefusal(field string, secret *corev1.Secret) string {
	ref := metav1.GetControllerOf(secret)
	if ref == nil || ref.Kind != "KeystoneAPI" || !strings.HasPrefix(ref.APIVersion, keystonev1.GroupVersion.Group+"/") {
		return ""
	}
	return writtenRefusal(field, secret.Name, ref.Name)
}

// ServiceRefusal says why a KeystoneService may not register the service of
// serviceType and name in api's namespace; "" when it may.
func ServiceRefusal(api *keystonev1.KeystoneAPI, serviceType, name string) string {
	if p := api.Policy(); !p.AllowsService(serviceType, name) {
		return fmt.Sprintf("spec.serviceType/spec.serviceName %s/%s is not among the services KeystoneAPI %s allows (%s)",
			serviceType, name, api.Name, p.Setting("services"))
	}
	return ""
}

// RolesRefusal says why a KeystoneService may not ask for roles in api's namespace
// (the first role refused); "" when it may.
func RolesRefusal(api *keystonev1.KeystoneAPI, roles []string) string {
	p := api.Policy()
	for _, role := range roles {
		if !p.AllowsRole(role) {
			return fmt.Sprintf("spec.roles asks for role %s, which KeystoneAPI %s does not allow (%s)", role, api.Name,
				p.Setting("roles"))
		}
	}
	return ""
}

// MissingRolesRefusal says that roles, which Keystone lacks, may not be created in api's
// namespace.
func MissingRolesRefusal(api *keystonev1.KeystoneAPI, roles []string) string {
	return fmt.Sprintf("spec.roles asks for %s, which Keystone lacks, and KeystoneAPI %s does not let its namespace create "+
		"roles (%s)", strings.Join(roles, ", "), api.Name, api.Policy().Setting("createRoles"))
}

// NotAllowedVerdict is a step refused for why: NotAllowed (Error), saying that nothing
// was written to Keystone.
func NotAllowedVerdict(why string) condition.Verdict {
	return condition.FalseVerdict(NotAllowed, "%s; nothing is written to Keystone", why)
}

// AllowedRoles keeps of roles those api's namespace may ask for.
func AllowedRoles(api *keystonev1.KeystoneAPI, roles []string) []string {
	p := api.Policy()
	var out []string
	for _, role := range roles {
		if p.AllowsRole(role) {
			out = append(out, role)
		}
	}
	return out
}
