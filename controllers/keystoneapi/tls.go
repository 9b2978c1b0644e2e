package keystoneapi

import (
	"context"
	"fmt"
	"strings"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	libtls "github.com/openstack-k8s-operators/lib-common/modules/common/tls"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// reconcileTLS marks TLSInputReady: the CA bundle Secret holds PEM certificates, and
// each interface's certificate Secret a certificate and the key that matches it. httpd
// serves both interfaces on one port, so both have a certificate or neither. The
// Secrets' revisions (not their contents: the key is secret) roll the pods when a
// certificate is renewed. In external mode only the CA bundle applies.
func (r *Reconciler) reconcileTLS(ctx context.Context, s *scope) (ctrl.Result, error) {
	api := s.api
	step := keystonev1.KeystoneAPITLSInputReady
	revisions := map[string]string{}
	var found []string
	if name := api.Spec.TLS.CaBundleSecretName; name != "" {
		secret, msg, err := r.secretWithKeys(ctx, api.Namespace, name, libtls.CABundleKey)
		if err != nil || msg != "" {
			return ctrl.Result{}, markTLSMissing(s, msg, err)
		}
		_, n, err := deploy.ParseCABundle(secret.Data[libtls.CABundleKey])
		if err != nil {
			s.round.MarkFalse(step, invalidCertificate, "CA bundle secret %s, key %s: %v", name, libtls.CABundleKey, err)
			return ctrl.Result{}, nil
		}
		s.caBundle = secret.Data[libtls.CABundleKey]
		revisions["ca"] = string(secret.UID) + "/" + secret.ResourceVersion
		found = append(found, fmt.Sprintf("CA bundle %s (%d certificates)", name, n))
	}
	if !api.Spec.ExternalKeystoneAPI {
		public, internal := deploy.TLSEnabled(api, keystonev1.EndpointPublic), deploy.TLSEnabled(api, keystonev1.EndpointInternal)
		if public != internal {
			s.round.MarkFalse(step, condition.InvalidInput, "tls.api.public.secretName and tls.api.internal.secretName: "+
				"both interfaces are served on port %d, so both need a certificate or neither", deploy.Port)
			return ctrl.Result{}, nil
		}
		for _, iface := range deploy.Interfaces {
			name := deploy.TLSSecretName(api, iface)
			if name == "" {
				continue
			}
			secret, msg, err := r.secretWithKeys(ctx, api.Namespace, name, libtls.CertKey, libtls.PrivateKey)
			if err != nil || msg != "" {
				return ctrl.Result{}, markTLSMissing(s, msg, err)
			}
			cert, err := deploy.ParseKeyPair(secret.Data[libtls.CertKey], secret.Data[libtls.PrivateKey])
			if err != nil {
				s.round.MarkFalse(step, invalidCertificate, "certificate secret %s of the %s interface: %v", name, iface, err)
				return ctrl.Result{}, nil
			}
			revisions[iface] = string(secret.UID) + "/" + secret.ResourceVersion
			found = append(found, fmt.Sprintf("%s certificate %s (valid until %s)", iface, name, cert.NotAfter.UTC().Format("2006-01-02")))
		}
	}
	s.tlsRevision = deploy.Hash(revisions)
	s.round.MarkTrue(step, "%s", strings.Join(found, ", "))
	return ctrl.Result{}, nil
}

// secretWithKeys reads a Secret that must hold keys; msg says what is missing when the Secret or a key is.
func (r *Reconciler) secretWithKeys(ctx context.Context, ns, name string, keys ...string) (*corev1.Secret, string, error) {
	secret := &corev1.Secret{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Sprintf("secret %s not found", name), nil
		}
		return nil, "", fmt.Errorf("reading secret %s: %w", name, err)
	}
	for _, k := range keys {
		if len(secret.Data[k]) == 0 {
			return nil, fmt.Sprintf("secret %s has no key %s", name, k), nil
		}
	}
	return secret, "", nil
}

func markTLSMissing(s *scope, msg string, err error) error {
	if err == nil {
		s.round.MarkFalse(keystonev1.KeystoneAPITLSInputReady, condition.DependencyNotFound, "%s", msg)
	}
	return err
}
