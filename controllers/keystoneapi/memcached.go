package keystoneapi

import (
	"context"
	"fmt"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/finalizers"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	memcachedv1 "github.com/openstack-k8s-operators/infra-operator/apis/memcached/v1beta1"
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
	if apierrors.IsNotFound(err) {
		s.round.MarkFalse(step, condition.DependencyNotFound, "Memcached %s not found", api.Spec.MemcachedInstance)
		return ctrl.Result{}, nil
	} else if err != nil {
		return ctrl.Result{}, fmt.Errorf("reading Memcached %s: %w", api.Spec.MemcachedInstance, err)
	}
	if s.acting(step) {
		if err := finalizers.Add(ctx, r.Client, mc, finalizerFor(api)); err != nil {
			return ctrl.Result{}, err
		}
	}
	if s.round.Mirror(step, "Memcached", mc.Name, mc.Status.Conditions); !s.round.IsTrue(step) {
		return ctrl.Result{}, nil
	}
	if len(mc.Status.ServerList) == 0 {
		s.round.MarkFalse(step, condition.Requested, "Memcached %s is ready but lists no servers yet", mc.Name)
		return ctrl.Result{}, nil
	}
	s.memcachedServers = mc.Status.ServerList
	s.memcachedTLS, s.memcachedMTLSSecret = mc.GetMemcachedTLSSupport(), ""
	if s.memcachedTLS {
		s.memcachedMTLSSecret = memcachedMTLSSecret(mc)
	}
	s.round.MarkTrue(step, "Memcached %s ready with %d servers", mc.Name, len(mc.Status.ServerList))
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
