// Package upstream makes, for tests, what keystone-operator wrote before this suite took
// over, the way its source (at Commit, and lib-common at the version it pins) writes it:
// its keys and their Secret, and the status of what it registered. A fixture standing
// for keystone-operator's state comes from here, so that the takeover is tested on what
// keystone-operator really leaves, not on this suite's picture of it.
package upstream

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Commit is the keystone-operator commit the fixtures are read from.
const Commit = "c9c3dbc"

// FernetKey is a key as keystone-operator makes every fernet and credential key
// (GenerateFernetKey, internal/keystone/fernet.go): 32 bytes of crypto/rand in standard
// base64, so "+" and "/" where Keystone's own keys have "-" and "_".
func FernetKey() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return base64.StdEncoding.EncodeToString(b)
}

// KeysData is the data of the keys Secret as keystone-operator creates it
// (ensureFernetKeys, internal/controller/keystoneapi_controller.go): CredentialKeys0 and
// CredentialKeys1, and FernetKeys0..fernetMaxActiveKeys-1, each a FernetKey.
func KeysData(fernetMaxActiveKeys int) map[string][]byte {
	data := map[string][]byte{"CredentialKeys0": []byte(FernetKey()), "CredentialKeys1": []byte(FernetKey())}
	for i := range fernetMaxActiveKeys {
		data[fmt.Sprintf("FernetKeys%d", i)] = []byte(FernetKey())
	}
	return data
}

// KeysSecret is the Secret "keystone" keystone-operator creates for api with data:
// through lib-common's secret.EnsureSecrets (createOrUpdateSecret), its labels are
// labels.GetLabels(api, "keystone.openstack.org", {}) (the owner's uid, namespace and
// name), its annotation keystone.openstack.org/rotatedat the creation time in RFC 3339,
// and api its controller owner.
func KeysSecret(api *keystonev1.KeystoneAPI, data map[string][]byte, rotatedAt time.Time) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: "keystone", Namespace: api.Namespace,
			Labels: map[string]string{
				"keystone.openstack.org/uid": string(api.UID), "keystone.openstack.org/namespace": api.Namespace,
				"keystone.openstack.org/name": api.Name,
			},
			Annotations: map[string]string{"keystone.openstack.org/rotatedat": rotatedAt.UTC().Format(time.RFC3339)},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(api,
				keystonev1.GroupVersion.WithKind("KeystoneAPI"))},
		},
		Data: data,
	}
}

// ServiceStatus is the status keystone-operator writes on a KeystoneService it
// registered (internal/controller/keystoneservice_controller.go: Reconcile and
// reconcileNormal, with api/v1beta1/conditions.go's messages): the service's ID, and
// every condition True with the service and the user it registered in its messages.
// Its KeystoneService status has no observedGeneration.
func ServiceStatus(svc *keystonev1.KeystoneService, serviceID string) keystonev1.KeystoneServiceStatus {
	now := metav1.NewTime(time.Now().UTC().Truncate(time.Second))
	ready := func(t lc.Type, msg string) lc.Condition {
		return lc.Condition{Type: t, Status: corev1.ConditionTrue, Reason: lc.ReadyReason, Message: msg, LastTransitionTime: now}
	}
	return keystonev1.KeystoneServiceStatus{
		ServiceID: serviceID,
		Conditions: lc.Conditions{
			ready(lc.ReadyCondition, lc.ReadyMessage),
			ready("AdminServiceClientReady", "Admin client ready"),
			ready("KeystoneAPIReady", "KeystoneAPI ready"),
			ready("KeystoneServiceOSServiceReady", fmt.Sprintf("Keystone Service %s - %s ready", svc.Spec.ServiceName, serviceID)),
			ready("KeystoneServiceOSUserReady", fmt.Sprintf("Keystone Service user %s ready", svc.Spec.ServiceUser)),
		},
	}
}

// EndpointStatus is the status keystone-operator writes on a KeystoneEndpoint whose
// endpoints it registered under the service of ID serviceID
// (internal/controller/keystoneendpoint_controller.go: Reconcile, reconcileNormal and
// reconcileEndpoints): the endpoints' IDs by interface, each with its spec URL and no
// region, the generation observed, and every condition True, the endpoints' with the
// spec's interfaces and URLs sorted. ids may name endpoints keystone-operator found and
// used (lib-common's CreateEndpoint takes any of the service's in the region for an
// interface), as it records those it created.
func EndpointStatus(ep *keystonev1.KeystoneEndpoint, serviceID string, ids map[string]string) keystonev1.KeystoneEndpointStatus {
	now := metav1.NewTime(time.Now().UTC().Truncate(time.Second))
	ready := func(t lc.Type, msg string) lc.Condition {
		return lc.Condition{Type: t, Status: corev1.ConditionTrue, Reason: lc.ReadyReason, Message: msg, LastTransitionTime: now}
	}
	status := keystonev1.KeystoneEndpointStatus{ServiceID: serviceID, EndpointIDs: map[string]string{},
		ObservedGeneration: ep.Generation}
	var urls []string
	for _, iface := range slices.Sorted(maps.Keys(ep.Spec.Endpoints)) {
		urls = append(urls, iface+":"+ep.Spec.Endpoints[iface])
		if id := ids[iface]; id != "" {
			status.EndpointIDs[iface] = id
			status.Endpoints = append(status.Endpoints, keystonev1.Endpoint{Interface: iface, URL: ep.Spec.Endpoints[iface], ID: id})
		}
	}
	status.Conditions = lc.Conditions{
		ready(lc.ReadyCondition, lc.ReadyMessage),
		ready("AdminServiceClientReady", "Admin client ready"),
		ready("KeystoneAPIReady", "KeystoneAPI ready"),
		ready("KeystoneServiceOSEndpointsReady", fmt.Sprintf("Keystone Endpoints ready: %+v", urls)),
		ready("KeystoneServiceReady", lc.ReadyMessage), // its KeystoneService's Ready, mirrored
	}
	return status
}

// KeystoneManageKey is a key as Keystone's own tools make it (keystone-manage
// fernet_setup, fernet_rotate, credential_setup and credential_rotate write
// cryptography's Fernet.generate_key(): 32 random bytes in url-safe base64, no newline):
// the keys of a director-deployed cloud that data-plane-adoption copies.
func KeystoneManageKey() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return base64.URLEncoding.EncodeToString(b)
}

// AdoptionSecret is the Secret "keystone" data-plane-adoption's procedure creates before
// the Identity service is enabled (docs_user/modules/proc_adopting-the-identity-service.adoc):
// type Opaque, no label, no annotation, no owner, and the files 0 and 1 of the old
// controllers' fernet-keys and credential-keys repositories, byte for byte (`cat ... |
// base64 -w 0`), as CredentialKeys0, CredentialKeys1, FernetKeys0 and FernetKeys1.
func AdoptionSecret(namespace string, fernet, credential [2]string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "keystone", Namespace: namespace},
		Type:       corev1.SecretTypeOpaque,
		Data: map[string][]byte{
			"CredentialKeys0": []byte(credential[0]), "CredentialKeys1": []byte(credential[1]),
			"FernetKeys0": []byte(fernet[0]), "FernetKeys1": []byte(fernet[1]),
		},
	}
}

// SampleKeystoneAPI is keystone-operator's own sample KeystoneAPI
// (config/samples/keystone_v1beta1_keystoneapi.yaml, as its tree has it from commit
// 011bf37 to c9c3dbc at least), field for field, in namespace: no containerImage, which
// keystone-operator's defaulting webhook fills in. Copied: that file is in no Go module
// the proxy serves.
func SampleKeystoneAPI(namespace string) string {
	return `apiVersion: keystone.openstack.org/v1beta1
kind: KeystoneAPI
metadata:
  name: keystone
  namespace: ` + namespace + `
spec:
  adminProject: admin
  adminUser: admin
  customServiceConfig: |
    [DEFAULT]
    debug = true
  databaseInstance: openstack
  databaseAccount: keystone
  preserveJobs: false
  region: regionOne
  secret: osp-secret
  resources:
    requests:
      memory: "500Mi"
      cpu: "1.0"
`
}
