package keystoneapi

import (
	"context"
	"fmt"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// reconcileTLS marks TLSInputReady (tlsVerdict) from the Secrets the spec names: the
// CA bundle's and, unless in external mode, each interface's certificate. The
// Secrets' revisions (not their contents: the key is secret) roll the pods when a
// certificate is renewed.
func (r *Reconciler) reconcileTLS(ctx context.Context, s *scope) (ctrl.Result, error) {
	secrets, err := r.secrets(ctx, s.api.Namespace, tlsSecretNames(s.api)...)
	if err != nil {
		return ctrl.Result{}, err
	}
	v, in := tlsVerdict(s.api, secrets)
	s.caBundle, s.tlsRevision = in.caBundle, in.revision
	s.round.Apply(keystonev1.KeystoneAPITLSInputReady, v)
	return ctrl.Result{}, nil
}

// tlsSecretNames are the Secrets TLSInputReady reads: the CA bundle's and, unless in
// external mode, each interface's certificate, those the spec names.
func tlsSecretNames(api *keystonev1.KeystoneAPI) []string {
	var names []string
	if name := api.Spec.TLS.CaBundleSecretName; name != "" {
		names = append(names, name)
	}
	if !api.Spec.ExternalKeystoneAPI {
		for _, iface := range deploy.Interfaces {
			if name := deploy.TLSSecretName(api, iface); name != "" {
				names = append(names, name)
			}
		}
	}
	return names
}

// secrets reads the Secrets of namespace named names; one that does not exist is
// left out of the map.
func (r *Reconciler) secrets(ctx context.Context, namespace string, names ...string) (map[string]*corev1.Secret, error) {
	found := make(map[string]*corev1.Secret, len(names))
	for _, name := range names {
		secret := &corev1.Secret{}
		err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, secret)
		switch {
		case err == nil:
			found[name] = secret
		case !apierrors.IsNotFound(err):
			return nil, fmt.Errorf("reading secret %s: %w", name, err)
		}
	}
	return found, nil
}

// secretWithKeys reads a Secret that must hold keys; msg says what is missing when the
// Secret or a key is (missingKeys).
func (r *Reconciler) secretWithKeys(ctx context.Context, ns, name string, keys ...string) (*corev1.Secret, string, error) {
	found, err := r.secrets(ctx, ns, name)
	if err != nil {
		return nil, "", err
	}
	if msg := missingKeys(name, found[name], keys...); msg != "" {
		return nil, msg, nil
	}
	return found[name], "", nil
}
