package keystoneapi

import (
	"context"
	"fmt"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/internal/finalizers"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// unneeded lists, for each step whose actions need fewer than every step before it, the
// earlier steps its actions do not wait for: work that does not need a blocked step
// still happens (docs/conditions.md), so that the critical path is the pods' own.
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
	// The pods' PodDisruptionBudget selects them by labels the spec fixes: it needs
	// nothing but a spec that makes objects.
	keystonev1.KeystoneAPIPDBReady: {keystonev1.KeystoneAPIServiceAccountReady, keystonev1.KeystoneAPITLSInputReady,
		keystonev1.KeystoneAPITopologyReady, keystonev1.KeystoneAPIDBReady, keystonev1.KeystoneAPIMemcachedReady,
		keystonev1.KeystoneAPIRabbitMqTransportURLReady, keystonev1.KeystoneAPIServiceConfigReady, keystonev1.KeystoneAPIFernetKeysReady,
		keystonev1.KeystoneAPIDBSyncReady, keystonev1.KeystoneAPIExposeServiceReady, keystonev1.KeystoneAPIBootstrapReady,
		keystonev1.KeystoneAPIDeploymentReady},
}

// waitingFor is the step step's actions wait for: the first before it, among those it
// needs, that is not True; "" when there is none.
func (s *scope) waitingFor(step lc.Type) lc.Type {
	return s.round.WaitingFor(step, unneeded[step]...)
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

	adminPassword string
	// adminSource says where adminPassword was read (access.PasswordSource).
	adminSource      string
	dbUser           string
	dbPassword       string
	memcachedServers []string
	// memcachedServersWithInet is its status.serverListWithInet (keystone-operator's
	// MemcachedServersWithInet template parameter).
	memcachedServersWithInet []string
	// in is what this round builds the KeystoneAPI's objects from (deploy.Gathered),
	// one value every builder reads: each step puts in it what it resolves (the
	// Topology, the Memcached's client certificate, the keys, the pods' revision, the
	// jobs' inputs), and the first read of the Deployment its selector.
	in deploy.Gathered
	// deployment is the API Deployment as this round first read it (nil when none
	// exists); deploymentRead says it was read.
	deployment     *appsv1.Deployment
	deploymentRead bool
	// memcachedTLS: the Memcached serves TLS (in.MemcachedMTLSSecret, when set, holds the
	// client certificate it asks for).
	memcachedTLS bool
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
	// caBundle is the PEM CA bundle of spec.tls, for this operator's Keystone clients.
	caBundle []byte
	// transportURL and quorumQueues come from the TransportURL's Secret.
	transportURL string
	quorumQueues bool
	// private is the private state Secret, once loaded.
	private *corev1.Secret
	// privateUnsaved: private is new and not created yet; its first record creates it.
	privateUnsaved bool
	// previousEndpoints is status.apiEndpoints as the previous round (or
	// keystone-operator) left it.
	previousEndpoints map[string]string
}

// existingDeployment is the API Deployment as this round first read it, nil when there
// is none; read once a round, and its selector put in s.in (the pods and the Services
// select what it selects).
func (r *Reconciler) existingDeployment(ctx context.Context, s *scope) (*appsv1.Deployment, error) {
	if !s.deploymentRead {
		dep := &appsv1.Deployment{}
		err := r.Get(ctx, client.ObjectKey{Namespace: s.api.Namespace, Name: s.api.Name}, dep)
		switch {
		case apierrors.IsNotFound(err):
			dep = nil
		case err != nil:
			return nil, fmt.Errorf("reading deployment %s: %w", s.api.Name, err)
		default:
			s.in.Selector = dep.Spec.Selector
		}
		s.deployment, s.deploymentRead = dep, true
	}
	return s.deployment, nil
}
