package keystoneapi

import (
	"context"
	"fmt"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/internal/finalizers"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	topologyv1 "github.com/openstack-k8s-operators/infra-operator/apis/topology/v1beta1"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// unneeded lists, for each step whose actions need fewer than every step before it, the
// earlier steps its actions do not wait for: work that does not need a blocked step
// still happens (CONDITIONS.md), so that the critical path is the pods' own.
// docs/keystoneapi.md ("What runs at once") argues each from what the objects and
// Keystone's pods use. Ready still waits for every step, and names the first not True.
var unneeded = map[lc.Type][]lc.Type{
	// The database and its account, the Memcached's finalizer and the TransportURL use
	// nothing of the ServiceAccount, the certificates or the Topology, nor of each other:
	// all three are asked for at once, and their servers come up side by side.
	keystonev1.KeystoneAPIDBReady: {keystonev1.KeystoneAPIServiceAccountReady, keystonev1.KeystoneAPITLSInputReady,
		keystonev1.KeystoneAPITopologyReady},
	keystonev1.KeystoneAPIMemcachedReady: {keystonev1.KeystoneAPIServiceAccountReady, keystonev1.KeystoneAPITLSInputReady,
		keystonev1.KeystoneAPITopologyReady, keystonev1.KeystoneAPIDBReady},
	keystonev1.KeystoneAPIRabbitMqTransportURLReady: {keystonev1.KeystoneAPIServiceAccountReady, keystonev1.KeystoneAPITLSInputReady,
		keystonev1.KeystoneAPITopologyReady, keystonev1.KeystoneAPIDBReady, keystonev1.KeystoneAPIMemcachedReady},
	// The API pods need the schema db-sync migrates and the keys, not the admin, project,
	// roles and endpoints bootstrap writes into it, nor the Services in front of them:
	// they roll out while bootstrap runs.
	keystonev1.KeystoneAPIDeploymentReady: {keystonev1.KeystoneAPIExposeServiceReady, keystonev1.KeystoneAPIBootstrapReady},
}

// waitingFor is the step step's actions wait for: the first before it, among those it
// needs, that is not True; "" when there is none.
func (s *scope) waitingFor(step lc.Type) lc.Type {
	return s.round.WaitingForExcept(step, unneeded[step]...)
}

// acting tells whether step may act this round: every step before it that it needs is True.
func (s *scope) acting(step lc.Type) bool { return s.waitingFor(step) == "" }

// afterwards says, for the message of a step observed while it may not act, when it acts again.
func (s *scope) afterwards(step lc.Type) string {
	return fmt.Sprintf("(updated once %s is True)", s.waitingFor(step))
}

// written tells whether every object, named in its metadata, exists in the
// KeystoneAPI's namespace, reading each into obj. A step observed while it may not
// act reports True for what it wrote before, and nothing while it wrote nothing.
func (r *Reconciler) written(ctx context.Context, s *scope, objs ...client.Object) (bool, error) {
	for _, obj := range objs {
		if err := r.Get(ctx, client.ObjectKey{Namespace: s.api.Namespace, Name: obj.GetName()}, obj); err != nil {
			return false, client.IgnoreNotFound(err)
		}
	}
	return true, nil
}

func setHash(api *keystonev1.KeystoneAPI, key, value string) {
	if api.Status.Hash == nil {
		api.Status.Hash = map[string]string{}
	}
	api.Status.Hash[key] = value
}

// finalizerFor is the finalizer a KeystoneAPI puts on the objects it uses; it names
// the KeystoneAPI so that several can share a Memcached.
func finalizerFor(api *keystonev1.KeystoneAPI) string {
	return finalizers.For("keystoneapi", api.Name)
}

// scope is what one reconcile of a KeystoneAPI has seen so far.
type scope struct {
	api   *keystonev1.KeystoneAPI
	round *condition.Round

	adminPassword    string
	dbUser           string
	dbPassword       string
	memcachedServers []string
	// memcachedTLS: the Memcached serves TLS; memcachedMTLSSecret, when set, holds the
	// client certificate it asks for.
	memcachedTLS        bool
	memcachedMTLSSecret string
	// memcachedMTLSRevision identifies the version of that Secret ("<uid>/<resourceVersion>").
	memcachedMTLSRevision string
	// databaseTLS: the database instance serves TLS (its MariaDBDatabase's status).
	databaseTLS bool
	// configRevision identifies the contents of the configuration Secret without
	// digesting them (they hold passwords).
	configRevision string
	// tlsRevision identifies the certificate Secrets the pods mount, the same way.
	tlsRevision string
	// fernetRotation is when the fernet keys rotate next, once FernetKeysReady saw them.
	fernetRotation time.Time
	// credentialKeys are the credential keys the pods mount, once FernetKeysReady saw
	// them usable; nil before.
	credentialKeys *deploy.KeyRepository
	// caBundle is the PEM CA bundle of spec.tls, for this operator's Keystone clients.
	caBundle []byte
	// topology is the Topology of topologyRef, once found.
	topology *topologyv1.Topology
	// transportURL and quorumQueues come from the TransportURL's Secret.
	transportURL string
	quorumQueues bool
	dbSyncHash   string
	// private is the private state Secret, once loaded.
	private *corev1.Secret
	// privateUnsaved: private is new and not created yet; its first record creates it.
	privateUnsaved bool
	// requeueAfter is the soonest time-based step (fernet rotation), 0 for none.
	requeueAfter time.Duration
	// previousEndpoints is status.apiEndpoints as the previous round (or
	// keystone-operator) left it.
	previousEndpoints map[string]string
}

// requeueAt asks for a reconcile after d, keeping the soonest request.
func (s *scope) requeueAt(d time.Duration) {
	if d <= 0 {
		d = time.Second
	}
	if s.requeueAfter == 0 || d < s.requeueAfter {
		s.requeueAfter = d
	}
}
