package deploy

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	memcachedv1 "github.com/openstack-k8s-operators/infra-operator/apis/memcached/v1beta1"
	libtls "github.com/openstack-k8s-operators/lib-common/modules/common/tls"
	corev1 "k8s.io/api/core/v1"
)

// Interfaces are the interfaces Keystone serves, each on a Service and a virtual host.
var Interfaces = []string{keystonev1.EndpointPublic, keystonev1.EndpointInternal}

// TLSSecretName is the certificate Secret of an interface; "" when it serves plain HTTP.
func TLSSecretName(api *keystonev1.KeystoneAPI, iface string) string {
	s := api.Spec.TLS.API.Public
	if iface == keystonev1.EndpointInternal {
		s = api.Spec.TLS.API.Internal
	}
	if s.SecretName == nil {
		return ""
	}
	return *s.SecretName
}

// TLSEnabled tells whether an interface serves HTTPS.
func TLSEnabled(api *keystonev1.KeystoneAPI, iface string) bool {
	return TLSSecretName(api, iface) != ""
}

// UsesTLS tells whether a KeystoneAPI has anything to do with TLS: a certificate or a CA bundle.
func UsesTLS(api *keystonev1.KeystoneAPI) bool {
	return api.Spec.TLS.CaBundleSecretName != "" || TLSEnabled(api, keystonev1.EndpointPublic) ||
		TLSEnabled(api, keystonev1.EndpointInternal)
}

// CertPath and KeyPath are where an interface's certificate and key are mounted
// (lib-common's directories, as keystone-operator mounts them).
func CertPath(iface string) string { return libtls.DefaultCertMountDir + "/" + iface + ".crt" }

// KeyPath is where an interface's private key is mounted.
func KeyPath(iface string) string { return libtls.DefaultKeyMountDir + "/" + iface + ".key" }

// CABundlePath is where the CA bundle is mounted: the system trust of keystone-operator's image.
const CABundlePath = libtls.DownstreamTLSCABundlePath

func tlsVolumeName(iface string) string { return iface + "-tls-certs" }

const caBundleVolume = "combined-ca-bundle"

// tlsVolumes are the certificate volumes of the API pods (certificates: true) or of
// the jobs (the CA bundle only), with their mounts.
func tlsVolumes(api *keystonev1.KeystoneAPI, certificates bool) ([]corev1.Volume, []corev1.VolumeMount) {
	var vols []corev1.Volume
	var mounts []corev1.VolumeMount
	if ca := api.Spec.TLS.CaBundleSecretName; ca != "" {
		vols = append(vols, secretVolume(caBundleVolume, ca, nil))
		mounts = append(mounts, corev1.VolumeMount{Name: caBundleVolume, MountPath: CABundlePath,
			SubPath: libtls.CABundleKey, ReadOnly: true})
	}
	if !certificates {
		return vols, mounts
	}
	for _, iface := range Interfaces {
		if !TLSEnabled(api, iface) {
			continue
		}
		vols = append(vols, secretVolume(tlsVolumeName(iface), TLSSecretName(api, iface), nil))
		mounts = append(mounts,
			corev1.VolumeMount{Name: tlsVolumeName(iface), MountPath: CertPath(iface), SubPath: libtls.CertKey, ReadOnly: true},
			corev1.VolumeMount{Name: tlsVolumeName(iface), MountPath: KeyPath(iface), SubPath: libtls.PrivateKey, ReadOnly: true})
	}
	return vols, mounts
}

// ErrNoCertificate is returned for PEM data without a certificate.
var ErrNoCertificate = errors.New("no PEM certificate")

// ParseCABundle returns the certificates of a PEM bundle.
func ParseCABundle(data []byte) (*x509.CertPool, int, error) {
	pool := x509.NewCertPool()
	n := 0
	for rest := data; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, 0, fmt.Errorf("certificate %d: %w", n+1, err)
		}
		pool.AddCert(cert)
		n++
	}
	if n == 0 {
		return nil, 0, ErrNoCertificate
	}
	return pool, n, nil
}

// ParseKeyPair checks that a certificate and its private key parse and match, and
// returns the leaf certificate.
func ParseKeyPair(certPEM, keyPEM []byte) (*x509.Certificate, error) {
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	return x509.ParseCertificate(pair.Certificate[0])
}

// memcachedMTLSVolume is the volume of the Memcached's client certificate.
const memcachedMTLSVolume = "memcached-mtls"

// WithMemcachedMTLS mounts the client certificate the Memcached asks for (its
// spec.tls.mtls.authCertSecret, keys tls.crt, tls.key and ca.crt) into every container
// of pod where keystone.conf's [cache] reads it (infra-operator's paths), as
// keystone-operator mounts it. Every pod: keystone-manage configures the cache too.
func WithMemcachedMTLS(pod *corev1.PodSpec, secret string) {
	if secret == "" {
		return
	}
	pod.Volumes = append(pod.Volumes, secretVolume(memcachedMTLSVolume, secret, nil))
	for i := range pod.Containers {
		pod.Containers[i].VolumeMounts = append(pod.Containers[i].VolumeMounts,
			corev1.VolumeMount{Name: memcachedMTLSVolume, MountPath: memcachedv1.CertMountPath(), SubPath: libtls.CertKey, ReadOnly: true},
			corev1.VolumeMount{Name: memcachedMTLSVolume, MountPath: memcachedv1.KeyMountPath(), SubPath: libtls.PrivateKey, ReadOnly: true},
			corev1.VolumeMount{Name: memcachedMTLSVolume, MountPath: memcachedv1.CaMountPath(), SubPath: libtls.CAKey, ReadOnly: true})
	}
}
