package deploy

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
)

// Port is the port Keystone's API listens on and its Services expose.
const Port = 5000

// Names of the objects a KeystoneAPI owns, and of the files they hold.
const (
	ConfigSecretSuffix = "-config-data"
	// LegacyKeysSuffix named this suite's keys Secret before it took keystone-operator's
	// name (KeysSecretName): such a Secret is copied and then removed.
	LegacyKeysSuffix   = "-keys"
	DBSecretSuffix     = "-db-secret"
	DBSyncJobSuffix    = "-db-sync"
	BootstrapJobSuffix = "-bootstrap"
	PublicSuffix       = "-public"
	InternalSuffix     = "-internal"

	// DatabaseName is the name of Keystone's database in MariaDB.
	DatabaseName = "keystone"

	// HashAnnotation records on a Job or pod template the digest of the public inputs
	// (see private.go) it was built for.
	HashAnnotation = "keystone.openstack.org/input-hash"
	// RotatedAtAnnotation records on the keys Secret when the fernet keys last rotated
	// (keystone-operator's annotation).
	RotatedAtAnnotation = "keystone.openstack.org/rotatedat"
	// LegacyRotatedAtAnnotation is what this suite recorded it as before; still read.
	LegacyRotatedAtAnnotation = "keystone.openstack.org/fernet-rotated-at"
)

// Keys of KeystoneAPIStatus.Hash.
const (
	HashConfig    = "config"
	HashDBSync    = "dbsync"
	HashBootstrap = "bootstrap"
)

// CleanupSecretName is the Secret holding a copy of the admin's password and of the CA
// bundle, kept (by a finalizer) until every registration has been removed from
// Keystone: when a namespace is deleted its Secrets go at once, and an external
// Keystone stays.
func CleanupSecretName(api *keystonev1.KeystoneAPI) string { return api.Name + "-cleanup-credentials" }

// Keys of the cleanup Secret: the admin's password, and a copy of the CA bundle of
// tls.caBundleSecretName (deregistering from an external Keystone over TLS needs it
// after the namespace's Secrets are gone).
const (
	CleanupPasswordKey = "AdminPassword"
	CleanupCABundleKey = "CABundle"
)

// ConfigSecretName is the Secret holding the rendered configuration.
func ConfigSecretName(api *keystonev1.KeystoneAPI) string { return api.Name + ConfigSecretSuffix }

// KeysSecretName is the Secret holding the fernet and credential keys: "keystone",
// whatever the KeystoneAPI's name, as keystone-operator names it and as the adoption
// of an existing cloud (data-plane-adoption) creates it before the KeystoneAPI exists.
// A namespace has one KeystoneAPI (InputReady refuses a second), so one such Secret.
func KeysSecretName(*keystonev1.KeystoneAPI) string { return "keystone" }

// LegacyKeysSecretName is where this suite kept the keys before: "<name>-keys".
func LegacyKeysSecretName(api *keystonev1.KeystoneAPI) string { return api.Name + LegacyKeysSuffix }

// DBSecretName is the Secret holding the database account's password, when the operator creates it.
func DBSecretName(api *keystonev1.KeystoneAPI) string { return api.Name + DBSecretSuffix }

// DBSyncJobName is the db-sync Job.
func DBSyncJobName(api *keystonev1.KeystoneAPI) string { return api.Name + DBSyncJobSuffix }

// BootstrapJobName is the bootstrap Job.
func BootstrapJobName(api *keystonev1.KeystoneAPI) string { return api.Name + BootstrapJobSuffix }

// ServiceName is the Service of an interface (public or internal).
func ServiceName(api *keystonev1.KeystoneAPI, iface string) string {
	if iface == keystonev1.EndpointPublic {
		return api.Name + PublicSuffix
	}
	return api.Name + InternalSuffix
}

// APILabel names, on everything a KeystoneAPI owns, that KeystoneAPI.
const APILabel = "keystone.openstack.org/keystoneapi"

// Labels mark everything a KeystoneAPI owns, its pods included.
func Labels(api *keystonev1.KeystoneAPI) map[string]string {
	labels := SelectorLabels(api)
	labels[APILabel] = api.Name
	return labels
}

// SelectorLabels select the API pods of a new Deployment and the Services': the
// labels keystone-operator selects them by (lib-common's service and owner), so that
// either operator can take over the other's Deployment, whose selector cannot change.
func SelectorLabels(api *keystonev1.KeystoneAPI) map[string]string {
	return map[string]string{ServiceLabel: "keystone", OwnerLabel: api.Name}
}

// Hash is a stable digest of a set of named values.
func Hash(values map[string]string) string {
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		_, _ = fmt.Fprintf(h, "%d:%s=%d:%s;", len(k), k, len(values[k]), values[k])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Endpoints returns the URLs Keystone is registered at, by interface: the override
// when set, else the Service's cluster DNS name.
func Endpoints(api *keystonev1.KeystoneAPI) map[string]string {
	out := map[string]string{}
	for _, iface := range []string{keystonev1.EndpointPublic, keystonev1.EndpointInternal} {
		url := api.EndpointOverrideURL(iface)
		if url == "" {
			scheme := "http"
			if TLSEnabled(api, iface) {
				scheme = "https"
			}
			url = fmt.Sprintf("%s://%s.%s.svc:%d", scheme, ServiceName(api, iface), api.Namespace, Port)
		}
		out[iface] = url
	}
	return out
}

// SecretRevision identifies what the pods read from a certificate Secret: its identity
// and its data, not its metadata, so that a label or annotation added to it (by
// cert-manager, by hand) rolls no pod while a renewed certificate does. Only for
// Secrets of certificates and keys, whose values no guess recovers from a digest: never
// for one holding passwords.
func SecretRevision(secret *corev1.Secret) string {
	values := map[string]string{"uid": string(secret.UID)}
	for k, v := range secret.Data {
		values["data/"+k] = string(v)
	}
	return Hash(values)
}
