package deploy

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
)

// What a KeystoneAPI publishes (status.hash, annotations, labels, events) is computed
// from public values only: names, images, URLs, and the resourceVersions of the Secrets
// whose contents changed. A digest of a secret value would let anyone who can read the
// KeystoneAPI test password guesses offline. What must be remembered about a secret
// value (the admin password bootstrap last ran with) is kept in the Secret
// <name>-private-state, as a keyed MAC whose random key lives beside it.

// Keys of the private state Secret.
const (
	// PrivateMACKey holds the random key of the MACs.
	PrivateMACKey = "mac-key"
	// privatePendingPrefix + job step: the MAC of the secret inputs of the Job in flight.
	privatePendingPrefix = "pending."
	// privateDonePrefix + job step: the MAC of the secret inputs the step last succeeded for.
	privateDonePrefix = "done."
	macKeyLength      = 32
)

// PrivateStateSecretName is the Secret holding what the operator remembers of secret values.
func PrivateStateSecretName(api *keystonev1.KeystoneAPI) string { return api.Name + "-private-state" }

// NewPrivateState returns the data of a new private state Secret: a random MAC key.
func NewPrivateState() (map[string][]byte, error) {
	key := make([]byte, macKeyLength)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("reading random bytes: %w", err)
	}
	return map[string][]byte{PrivateMACKey: key}, nil
}

// PrivateMAC is the MAC of named secret values under the state's key; "" when the
// state has no key.
func PrivateMAC(state map[string][]byte, values map[string]string) string {
	key := state[PrivateMACKey]
	if len(key) == 0 {
		return ""
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(Hash(values)))
	return hex.EncodeToString(m.Sum(nil))
}

// PendingKey and DoneKey name the entries of a job step in the private state.
func PendingKey(step string) string { return privatePendingPrefix + step }

// DoneKey names the entry of the secret inputs a job step last succeeded for.
func DoneKey(step string) string { return privateDonePrefix + step }
