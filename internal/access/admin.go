package access

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-logr/logr"
	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/internal/reconciler"
	libtls "github.com/openstack-k8s-operators/lib-common/modules/common/tls"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Lookup returns the namespace's KeystoneAPI: the first created (First), which is the
// one that deploys Keystone; any other is refused as InvalidInput by its own
// controller. nil when there is none.
func Lookup(ctx context.Context, c client.Reader, ns string) (*keystonev1.KeystoneAPI, error) {
	list := &keystonev1.KeystoneAPIList{}
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("listing KeystoneAPIs: %w", err)
	}
	return First(list.Items), nil
}

// First returns the KeystoneAPI created first (by creation time, then by
// name), nil for none. keystone-operator's schema allows one per namespace in effect:
// the database, the KeystoneServices and openstack-config are the namespace's.
func First(items []keystonev1.KeystoneAPI) *keystonev1.KeystoneAPI {
	var first *keystonev1.KeystoneAPI
	for i := range items {
		a := &items[i]
		if first == nil || a.CreationTimestamp.Before(&first.CreationTimestamp) ||
			(a.CreationTimestamp.Equal(&first.CreationTimestamp) && a.Name < first.Name) {
			first = a
		}
	}
	return first
}

// Credentials returns the credentials of api's admin at its internal endpoint;
// ok is false when the admin password Secret or its key is missing.
func Credentials(ctx context.Context, c client.Reader, api *keystonev1.KeystoneAPI) (creds identity.Credentials, ok bool, err error) {
	password, source, ok, err := adminPassword(ctx, c, api)
	if err != nil || !ok {
		return creds, false, err
	}
	ca, err := CABundle(ctx, c, api)
	if err != nil {
		return creds, false, err
	}
	return adminAt(api, password, AdminSource(api, source), ca), true, nil
}

// AdminSource is where the admin's password of api was read (source, PasswordSource's),
// and what a person last changed of the KeystoneAPI (reconciler.Touched: its generation,
// labels and annotations, not the operator's AdminLoginRefusedAnnotation): a login
// Keystone refused is not tried again until one of them changes, so an admin who fixed
// the password in Keystone touches the Secret or the KeystoneAPI (which only an admin
// may edit), and every login of that admin (the KeystoneAPI's check, every
// registration, the regions' read) shares the one refusal.
func AdminSource(api *keystonev1.KeystoneAPI, source string) string {
	return fmt.Sprintf("%s; KeystoneAPI %s touched %s", source, api.UID, reconciler.Touched(api, AdminLoginRefusedAnnotation))
}

// AdminLoginRefusedAnnotation records on a KeystoneAPI the last login of its admin that
// Keystone refused (identity.RefusalRecord: a digest of the user, Keystone and where
// the password was read, AdminSource; no password), written by the operator
// (RecordAdminRefusal) and removed by a login of that admin that read it and works. A
// login with that record is not sent, also after the operator restarts: every refusal
// counts towards Keystone's lockout. It is the operator's own: writing it is not a
// touch of the KeystoneAPI, and a change of the Secret or a touch makes another record.
const AdminLoginRefusedAnnotation = "keystone.openstack.org/admin-login-refused"

// recordTimeout bounds RecordAdminRefusal's write, which runs while the logins of that
// admin wait (identity.Clients.RecordRefusal), on a context of its own: the login's may
// be nearly spent.
const recordTimeout = 5 * time.Second

// RecordAdminRefusal is identity.Clients.RecordRefusal for the KeystoneAPIs' admins: it
// sets AdminLoginRefusedAnnotation on the credentials' Holder to record; for "", it
// removes the record the credentials were read with (Credentials.Recorded), and only
// that one: a newer record, of a refusal meanwhile, stays. A failure is logged, and
// costs one more login after a restart.
func RecordAdminRefusal(c client.Writer, log logr.Logger) func(ctx context.Context, creds identity.Credentials, record string) {
	return func(ctx context.Context, creds identity.Credentials, record string) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
		defer cancel()
		api := &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Namespace: creds.Holder.Namespace, Name: creds.Holder.Name}}
		patch, err := recordPatch(record, creds.Recorded)
		if err == nil {
			err = c.Patch(ctx, api, patch)
		}
		// Gone, or (a removal) another record there by now: nothing to do.
		if err != nil && !apierrors.IsNotFound(err) && (record != "" || !apierrors.IsInvalid(err)) {
			log.Error(err, "recording the admin's refused login on its KeystoneAPI: a restarted operator tries it once more",
				"keystoneAPI", creds.Holder, "refused", record != "")
		}
	}
}

// recordPatch sets AdminLoginRefusedAnnotation to record (a merge patch), or, for "",
// removes it if it is still old (a JSON patch whose test fails, 422, when it is not).
func recordPatch(record, old string) (client.Patch, error) {
	if record != "" {
		data, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
			AdminLoginRefusedAnnotation: record}}})
		return client.RawPatch(types.MergePatchType, data), err
	}
	path := "/metadata/annotations/" + strings.ReplaceAll(AdminLoginRefusedAnnotation, "/", "~1")
	data, err := json.Marshal([]map[string]string{{"op": "test", "path": path, "value": old}, {"op": "remove", "path": path}})
	return client.RawPatch(types.JSONPatchType, data), err
}

// adminPassword reads the admin's password from the KeystoneAPI's Secret, and where it
// was read (PasswordSource); ok is false when the Secret or its key is missing.
func adminPassword(ctx context.Context, c client.Reader, api *keystonev1.KeystoneAPI) (password, source string, ok bool, err error) {
	key := api.Spec.PasswordSelectors.Admin
	secret, found, err := SecretKey(ctx, c, api.Namespace, api.Spec.Secret, key)
	if err != nil || !found {
		return "", "", false, err
	}
	return string(secret.Data[key]), PasswordSource(secret, key), true, nil
}

// PasswordSource names where a password was read, the value of key in secret, as
// "<uid>/<resourceVersion>#<key>": no password, only where it is kept. A login Keystone
// refused is not tried again until it changes (identity.Credentials.Source), and a
// user's password is set again when it does (identity.UserSpec.PasswordFrom).
func PasswordSource(secret *corev1.Secret, key string) string {
	return string(secret.UID) + "/" + secret.ResourceVersion + "#" + key
}

// SecretKey reads the Secret name of namespace ns and tells whether it holds key
// (found is false when the Secret or the key is missing).
func SecretKey(ctx context.Context, c client.Reader, ns, name, key string) (secret *corev1.Secret, found bool, err error) {
	secret = &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("reading secret %s: %w", name, err)
	}
	_, found = secret.Data[key]
	return secret, found, nil
}

// CleanupCredentials returns the admin's credentials for removing a registration: the
// admin Secret's password and the CA bundle, or, for whichever of them is gone (a
// namespace deleted at once, a manifest deleted with its Secrets), the copy the
// KeystoneAPI keeps until no registration is left (deploy.CleanupSecretName). missing
// says what is gone with no copy left ("" when nothing is): then Keystone cannot be
// reached, as when it does not answer.
func CleanupCredentials(ctx context.Context, c client.Reader, api *keystonev1.KeystoneAPI) (creds identity.Credentials, missing string, err error) {
	saved := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: api.Namespace, Name: deploy.CleanupSecretName(api)}, saved); client.IgnoreNotFound(err) != nil {
		return identity.Credentials{}, "", fmt.Errorf("reading secret %s: %w", deploy.CleanupSecretName(api), err)
	}
	password, source, ok, err := adminPassword(ctx, c, api)
	if err != nil {
		return identity.Credentials{}, "", err
	}
	if !ok {
		value, found := saved.Data[deploy.CleanupPasswordKey]
		if !found {
			return identity.Credentials{}, Missing(api), nil
		}
		password, source = string(value), PasswordSource(saved, deploy.CleanupPasswordKey)
	}
	ca, err := CABundle(ctx, c, api)
	if err != nil {
		copied := saved.Data[deploy.CleanupCABundleKey]
		var gone *bundleGoneError
		switch {
		case len(copied) > 0:
			ca = copied
		case errors.As(err, &gone):
			return identity.Credentials{}, err.Error(), nil
		default:
			return identity.Credentials{}, "", err
		}
	}
	return adminAt(api, password, AdminSource(api, source), ca), "", nil
}

// adminAt is the admin's identity at api's internal endpoint, with password (read at
// source), trusting ca.
func adminAt(api *keystonev1.KeystoneAPI, password, source string, ca []byte) identity.Credentials {
	return AdminAt(api, api.Status.APIEndpoints[keystonev1.EndpointInternal], password, source, ca)
}

// AdminAt is the admin's identity at url, with password (read at source, AdminSource),
// trusting ca; its refused logins are recorded on api (AdminLoginRefusedAnnotation).
func AdminAt(api *keystonev1.KeystoneAPI, url, password, source string, ca []byte) identity.Credentials {
	return identity.Credentials{
		URL: url, User: api.Spec.AdminUser, Password: password, Project: api.Spec.AdminProject, Domain: "Default",
		CABundle: ca, Source: source, Holder: client.ObjectKeyFromObject(api), Recorded: api.Annotations[AdminLoginRefusedAnnotation],
	}
}

// CABundle reads the PEM CA bundle of a KeystoneAPI's tls.caBundleSecretName; nil when
// none is named. A bundle named and missing is an error: Keystone's certificate is
// never accepted unverified.
func CABundle(ctx context.Context, c client.Reader, api *keystonev1.KeystoneAPI) ([]byte, error) {
	name := api.Spec.TLS.CaBundleSecretName
	if name == "" {
		return nil, nil
	}
	secret := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: api.Namespace, Name: name}, secret); apierrors.IsNotFound(err) {
		return nil, &bundleGoneError{fmt.Sprintf("the CA bundle secret %s of KeystoneAPI %s not found", name, api.Name)}
	} else if err != nil {
		return nil, fmt.Errorf("reading the CA bundle secret %s of KeystoneAPI %s: %w", name, api.Name, err)
	}
	ca := secret.Data[libtls.CABundleKey]
	if len(ca) == 0 {
		return nil, &bundleGoneError{fmt.Sprintf("the CA bundle secret %s of KeystoneAPI %s has no key %s", name, api.Name, libtls.CABundleKey)}
	}
	return ca, nil
}

// bundleGoneError is a CA bundle named and not there: its Secret, or its key, is missing.
type bundleGoneError struct{ msg string }

func (e *bundleGoneError) Error() string { return e.msg }

// Missing is the message of a step that cannot reach Keystone without the admin's password.
func Missing(api *keystonev1.KeystoneAPI) string {
	return fmt.Sprintf("admin secret %s with key %s of KeystoneAPI %s not found", api.Spec.Secret,
		api.Spec.PasswordSelectors.Admin, api.Name)
}

// Admin returns a client of the Keystone of namespace ns's KeystoneAPI as its admin, at
// url when given (Keystone as reachable from where this runs) or else the KeystoneAPI's
// internal endpoint, each request bounded by timeout (0: none), and the URL used: what an
// admin's command (kubectl keystone release-cluster) acts with.
func Admin(ctx context.Context, c client.Reader, ns, url string, timeout time.Duration) (*identity.Client, string, error) {
	api, err := Lookup(ctx, c, ns)
	if err != nil {
		return nil, "", err
	}
	if api == nil {
		return nil, "", fmt.Errorf("namespace %s has no KeystoneAPI: its Keystone is not known", ns)
	}
	creds, ok, err := Credentials(ctx, c, api)
	if err != nil {
		return nil, "", err
	}
	if !ok {
		return nil, "", errors.New(Missing(api))
	}
	if url != "" {
		creds.URL = url
	}
	kc, err := (&identity.Clients{Timeout: timeout}).Get(ctx, creds)
	return kc, creds.URL, err
}
