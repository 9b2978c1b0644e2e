package keystoneapi

import (
	"context"
	"fmt"
	"strings"

	libtls "github.com/openstack-k8s-operators/lib-common/modules/common/tls"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
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

// missingKeys says what is missing of the Secret name (nil when it does not exist)
// that must hold keys: the Secret, or its first key that is empty; "" for nothing.
func missingKeys(name string, secret *corev1.Secret, keys ...string) string {
	if secret == nil {
		return fmt.Sprintf("secret %s not found", name)
	}
	for _, k := range keys {
		if len(secret.Data[k]) == 0 {
			return fmt.Sprintf("secret %s has no key %s", name, k)
		}
	}
	return ""
}

// tlsInputs is what TLSInputReady hands the later steps: the CA bundle (once it is
// valid) and the revision of the Secrets the pods mount (once all are).
type tlsInputs struct {
	caBundle []byte
	revision string
}

// tlsVerdict is TLSInputReady from the Secrets tlsSecretNames names (secrets, by name;
// one missing does not exist): the CA bundle Secret holds PEM certificates, and each
// interface's Secret a certificate and the key that matches it; httpd serves both
// interfaces on one port, so both have a certificate or neither. A Secret or key
// missing is DependencyNotFound and one that does not parse InvalidCertificate (both
// Warning: a certificate may be on its way), one interface alone InvalidInput (Error).
func tlsVerdict(api *keystonev1.KeystoneAPI, secrets map[string]*corev1.Secret) (condition.Verdict, tlsInputs) {
	var in tlsInputs
	revisions := map[string]string{}
	var found []string
	if name := api.Spec.TLS.CaBundleSecretName; name != "" {
		secret := secrets[name]
		if missing := missingKeys(name, secret, libtls.CABundleKey); missing != "" {
			return condition.FalseVerdict(condition.DependencyNotFound, "%s", missing), in
		}
		_, n, err := deploy.ParseCABundle(secret.Data[libtls.CABundleKey])
		if err != nil {
			return condition.FalseVerdict(invalidCertificate, "CA bundle secret %s, key %s: %v", name, libtls.CABundleKey, err), in
		}
		in.caBundle = secret.Data[libtls.CABundleKey]
		revisions["ca"] = deploy.SecretRevision(secret)
		found = append(found, fmt.Sprintf("CA bundle %s (%d certificates)", name, n))
	}
	if !api.Spec.ExternalKeystoneAPI {
		if deploy.TLSEnabled(api, keystonev1.EndpointPublic) != deploy.TLSEnabled(api, keystonev1.EndpointInternal) {
			return condition.FalseVerdict(condition.InvalidInput, "tls.api.public.secretName and tls.api.internal.secretName: "+
				"both interfaces are served on port %d, so both need a certificate or neither", deploy.Port), in
		}
		for _, iface := range deploy.Interfaces {
			name := deploy.TLSSecretName(api, iface)
			if name == "" {
				continue
			}
			secret := secrets[name]
			if missing := missingKeys(name, secret, libtls.CertKey, libtls.PrivateKey); missing != "" {
				return condition.FalseVerdict(condition.DependencyNotFound, "%s", missing), in
			}
			cert, err := deploy.ParseKeyPair(secret.Data[libtls.CertKey], secret.Data[libtls.PrivateKey])
			if err != nil {
				return condition.FalseVerdict(invalidCertificate, "certificate secret %s of the %s interface: %v", name, iface, err), in
			}
			revisions[iface] = deploy.SecretRevision(secret)
			found = append(found, fmt.Sprintf("%s certificate %s (valid until %s)", iface, name, cert.NotAfter.UTC().Format("2006-01-02")))
		}
	}
	in.revision = deploy.Hash(revisions)
	return condition.TrueVerdict("%s", strings.Join(found, ", ")), in
}
