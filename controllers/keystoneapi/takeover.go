package keystoneapi

import (
	"context"
	"fmt"
	"maps"
	"regexp"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/internal/finalizers"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Taking over a KeystoneAPI that keystone-operator deployed. Its objects carry the
// names this suite uses (the keys Secret "keystone", the Deployment and its selector,
// the TransportURL <name>-keystone-transport), so most of the takeover is using what
// exists. What differs is recorded differently and is read here once:
//   - status.hash: keystone-operator's digests (lib-common's ObjectHash) are not
//     this suite's, which would run db-sync and bootstrap again. A job it recorded is
//     taken as done when the Keystone it deployed runs the current image (and, for
//     bootstrap, is registered at the current endpoints); then this suite's digest
//     replaces keystone-operator's, and the question is not asked again.
//   - its finalizer "openstack.org/keystoneapi", on the KeystoneAPI and on what it
//     used (Memcached, MariaDBAccount, MariaDBDatabase, Topology), is released with
//     this suite's (releaseFinalizers, reconcileDelete).

// UpstreamFinalizer is the finalizer keystone-operator puts on the KeystoneAPI and on
// the objects it uses.
var UpstreamFinalizer = finalizers.UpstreamOwn("keystoneapi")

// ownDigest matches a digest of this suite's (deploy.Hash): 64 hexadecimal digits.
// keystone-operator's are lib-common's ObjectHash, longer and not hexadecimal.
var ownDigest = regexp.MustCompile(`^[0-9a-f]{64}$`)

// upstreamRecorded tells whether status.hash[key] was recorded by keystone-operator.
func upstreamRecorded(api *keystonev1.KeystoneAPI, key string) bool {
	v := api.Status.Hash[key]
	return v != "" && !ownDigest.MatchString(v)
}

// upstreamJobDone tells whether keystone-operator ran the job of in for what the
// KeystoneAPI asks now, and says why (or why not).
func (r *Reconciler) upstreamJobDone(ctx context.Context, s *scope, in jobInputs) (bool, string, error) {
	if !upstreamRecorded(s.api, in.HashKey) {
		return false, "", nil
	}
	// Read from the API server, not the cache: asked once per takeover, and a cache that
	// has not seen the Deployment yet would run the job again.
	dep := &appsv1.Deployment{}
	if err := r.Reporter.Reader.Get(ctx, client.ObjectKey{Namespace: s.api.Namespace, Name: s.api.Name}, dep); err != nil {
		return false, "", client.IgnoreNotFound(err)
	}
	containers := dep.Spec.Template.Spec.Containers
	if len(containers) == 0 || containers[0].Image != s.api.Spec.ContainerImage {
		return false, "", nil // a new image: db-sync has to run for it
	}
	if in.HashKey == deploy.HashBootstrap && !maps.Equal(s.previousEndpoints, s.api.Status.APIEndpoints) {
		return false, "", nil // Keystone moves: bootstrap registers it at its new endpoints
	}
	return true, fmt.Sprintf("keystone-operator ran it for image %s, which deployment %s runs", s.api.Spec.ContainerImage, dep.Name), nil
}
