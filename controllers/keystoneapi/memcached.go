package keystoneapi

import (
	"context"
	"fmt"

	libtls "github.com/openstack-k8s-operators/lib-common/modules/common/tls"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/internal/finalizers"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	memcachedv1 "github.com/openstack-k8s-operators/infra-operator/apis/memcached/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// reconcileMemcached marks MemcachedReady: it mirrors the Memcached and takes its servers.
func (r *Reconciler) reconcileMemcached(ctx context.Context, s *scope) (ctrl.Result, error) {
	api := s.api
	step := keystonev1.KeystoneAPIMemcachedReady
	mc := &memcachedv1.Memcached{}
	err := r.Get(ctx, client.ObjectKey{Namespace: api.Namespace, Name: api.Spec.MemcachedInstance}, mc)
	switch {
	case apierrors.IsNotFound(err):
		mc = nil
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("reading Memcached %s: %w", api.Spec.MemcachedInstance, err)
	case s.acting(step):
		if err := finalizers.Add(ctx, r.Client, mc, finalizerFor(api)); err != nil {
			return ctrl.Result{}, err
		}
	}
	if v := memcachedVerdict(api.Spec.MemcachedInstance, mc); !v.True {
		s.round.Apply(step, v)
		return ctrl.Result{}, nil
	}
	s.memcachedServers, s.memcachedServersWithInet = mc.Status.ServerList, mc.Status.ServerListWithInet
	s.memcachedTLS, s.in.MemcachedMTLSSecret, s.memcachedMTLSRevision = mc.GetMemcachedTLSSupport(), "", ""
	if s.memcachedTLS {
		s.in.MemcachedMTLSSecret = memcachedMTLSSecret(mc)
	}
	v := memcachedVerdict(api.Spec.MemcachedInstance, mc)
	if s.in.MemcachedMTLSSecret != "" {
		// The pods mount the client certificate file by file (SubPath), which a renewal
		// never updates: its Secret's data are part of the pods' revision instead.
		secret := &corev1.Secret{}
		err := r.Get(ctx, client.ObjectKey{Namespace: api.Namespace, Name: s.in.MemcachedMTLSSecret}, secret)
		switch {
		case apierrors.IsNotFound(err):
			secret = nil
		case err != nil:
			return ctrl.Result{}, fmt.Errorf("reading secret %s: %w", s.in.MemcachedMTLSSecret, err)
		default:
			s.memcachedMTLSRevision = deploy.SecretRevision(secret)
		}
		v = memcachedMTLSVerdict(v, mc.Name, s.in.MemcachedMTLSSecret, secret)
	}
	s.round.Apply(step, v)
	return ctrl.Result{}, nil
}

// memcachedMTLSSecret is the Secret of the client certificate mc asks for, "" when
// it asks for none (infra-operator's GetMemcachedMTLSSecret, which expects the name set).
func memcachedMTLSSecret(mc *memcachedv1.Memcached) string {
	if mc.Spec.TLS.MTLS.AuthCertSecret.SecretName == nil {
		return ""
	}
	return mc.GetMemcachedMTLSSecret()
}

// memcachedVerdict is MemcachedReady from the Memcached named name (nil when it does
// not exist: DependencyNotFound): its Ready mirrored, then True once it lists servers.
func memcachedVerdict(name string, mc *memcachedv1.Memcached) condition.Verdict {
	if mc == nil {
		return condition.FalseVerdict(condition.DependencyNotFound, "Memcached %s not found", name)
	}
	if v := condition.Mirror("Memcached", condition.Of(mc.Name, mc.Status.Conditions)); !v.True {
		return v
	}
	if len(mc.Status.ServerList) == 0 {
		return condition.FalseVerdict(condition.Requested, "Memcached %s is ready but lists no servers yet", mc.Name)
	}
	return condition.TrueVerdict("Memcached %s ready with %d servers", mc.Name, len(mc.Status.ServerList))
}

// memcachedMTLSVerdict is MemcachedReady once the Memcached is ready (ready) and asks
// for client certificates: the Secret name (nil: missing) must hold the certificate,
// its key and the CA, which the pods mount; DependencyNotFound (Warning) until it does.
func memcachedMTLSVerdict(ready condition.Verdict, memcached, name string, secret *corev1.Secret) condition.Verdict {
	if missing := missingKeys(name, secret, libtls.CertKey, libtls.PrivateKey, libtls.CAKey); missing != "" {
		return condition.FalseVerdict(condition.DependencyNotFound, "Memcached %s asks for client certificates: %s", memcached, missing)
	}
	return condition.TrueVerdict("%s, client certificate from secret %s", ready.Message, name)
}
