package keystoneapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/internal/reconciler"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// reconcileConfig marks ServiceConfigReady (configVerdict): the rendered configuration is
// stored in its Secret and its revision in status.hash. While an earlier step is not True
// (the database's credentials or memcached's servers may be missing) the Secret is
// observed as rendered before.
func (r *Reconciler) reconcileConfig(ctx context.Context, s *scope) (ctrl.Result, error) {
	api := s.api
	step := keystonev1.KeystoneAPIServiceConfigReady
	found := configFound{secret: deploy.ConfigSecretName(api)}
	if !s.acting(step) {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: found.secret}}
		if ok, err := r.written(ctx, s, secret); !ok {
			return ctrl.Result{}, err
		}
		s.setConfigRevision(secret)
		found.waiting = s.afterwards(step)
		s.round.Apply(step, configVerdict(found))
		return ctrl.Result{}, nil
	}
	custom, err := r.httpdCustomization(ctx, api)
	if err != nil {
		return ctrl.Result{}, err
	}
	if name := api.Spec.HttpdCustomization.CustomConfigSecret; custom == nil && name != nil && *name != "" {
		found.missingCustom = *name
	}
	var federation map[string]string
	if name := api.Spec.FederatedRealmConfig; name != "" {
		secrets, err := r.secrets(ctx, api.Namespace, name)
		if err != nil {
			return ctrl.Result{}, err
		}
		federation, found.federation = federationFilesOf(name, secrets[name])
	}
	if found.renderable() {
		var rendered deploy.Rendered
		input := deploy.ConfigInput{
			DatabaseHostname: api.Status.DatabaseHostname, DatabaseUser: s.dbUser, DatabasePassword: s.dbPassword,
			MemcachedServers: s.memcachedServers, MemcachedServersWithInet: s.memcachedServersWithInet, HttpdCustom: custom,
			TransportURL: s.transportURL, QuorumQueues: s.quorumQueues,
			FederationFiles: federation, DatabaseTLS: s.databaseTLS, MemcachedTLS: s.memcachedTLS, MemcachedMTLS: s.in.MemcachedMTLSSecret != "",
		}
		rendered, found.renderErr = deploy.Render(api, input)
		found.asWritten = rendered.AsWritten
		if found.renderErr == nil {
			// The Deployment, written only in a round where this step acted (it needs
			// every step this one needs), mounts each file where it is read.
			s.in.APIFiles = deploy.APIFiles(api, input)
			secret, err := r.writeSecret(ctx, api, found.secret, rendered.Files)
			if err != nil {
				return ctrl.Result{}, err
			}
			s.setConfigRevision(secret)
		}
	}
	s.round.Apply(step, configVerdict(found))
	return ctrl.Result{}, nil
}

// httpdCustomization reads the snippets of httpdCustomization.customConfigSecret; nil
// when none is named or the Secret does not exist.
func (r *Reconciler) httpdCustomization(ctx context.Context, api *keystonev1.KeystoneAPI) (map[string]string, error) {
	name := api.Spec.HttpdCustomization.CustomConfigSecret
	if name == nil || *name == "" {
		return nil, nil
	}
	secret := &corev1.Secret{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: api.Namespace, Name: *name}, secret); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	custom := map[string]string{}
	for k, v := range secret.Data {
		if len(v) > 0 {
			custom[k] = string(v)
		}
	}
	return custom, nil
}

// FederationConfigKey is the key of a federatedRealmConfig Secret: a JSON object of
// file names and their JSON contents (keystone-operator's format).
const FederationConfigKey = "federation-config.json"

// setConfigRevision records the configuration Secret's revision: a digest of its
// identity and resourceVersion, which change with its contents. The files hold
// passwords, so no digest of them is published.
func (s *scope) setConfigRevision(secret *corev1.Secret) {
	s.configRevision = deploy.Hash(map[string]string{"uid": string(secret.UID), "resourceVersion": secret.ResourceVersion})
	setHash(s.api, deploy.HashConfig, s.configRevision)
	s.in.PodRevision = s.podRevision()
}

// writeSecret makes the owned Secret name hold exactly files; it writes only what differs.
// A Secret it creates carries createFinalizers.
func (r *Reconciler) writeSecret(ctx context.Context, api *keystonev1.KeystoneAPI, name string, files map[string]string,
	createFinalizers ...string) (*corev1.Secret, error) {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: api.Namespace}}
	if _, err := reconciler.CreateOrPatch(ctx, r.Client, secret, func() error {
		if secret.ResourceVersion == "" {
			// Created with them, in one write; on an existing Secret, finalizers are
			// patched with an optimistic lock (internal/finalizers), not here.
			secret.Finalizers = createFinalizers
		}
		secret.Labels = deploy.MergeLabels(secret.Labels, deploy.Labels(api))
		data := make(map[string][]byte, len(files))
		for k, v := range files {
			data[k] = []byte(v)
		}
		if !maps.EqualFunc(secret.Data, data, bytes.Equal) {
			secret.Data, secret.StringData = data, nil
		}
		return controllerutil.SetControllerReference(api, secret, r.Scheme())
	}); err != nil {
		return nil, fmt.Errorf("writing Secret %s: %w", name, err)
	}
	return secret, nil
}

// inputProblem is why an input cannot be used, as the step reports it.
type inputProblem struct {
	reason  condition.Reason
	message string
}

// configFound is what ServiceConfigReady observed.
type configFound struct {
	secret        string        // the configuration Secret's name
	waiting       string        // while an earlier step is not True, when it is rendered again; else ""
	missingCustom string        // httpdCustomization.customConfigSecret, named but not found
	federation    *inputProblem // what is wrong with federatedRealmConfig
	renderErr     error
	asWritten     []string // users' files used as written, not templates that render (deploy.Rendered)
}

// renderable tells whether the configuration can be rendered from the inputs.
func (c configFound) renderable() bool { return c.missingCustom == "" && c.federation == nil }

// configVerdict is ServiceConfigReady: True for the configuration rendered into its
// Secret (or, while an earlier step is not True, as rendered before), naming the users'
// files used as written (no template its parameters render); a custom
// configuration Secret missing is DependencyNotFound (Warning), federatedRealmConfig's
// problem has its own reason, and a rendering that fails is CreationFailed (Error).
func configVerdict(c configFound) condition.Verdict {
	switch {
	case c.waiting != "":
		return condition.TrueVerdict("configuration in secret %s as rendered before %s", c.secret, c.waiting)
	case c.missingCustom != "":
		return condition.FalseVerdict(condition.DependencyNotFound, "httpdCustomization.customConfigSecret %s not found", c.missingCustom)
	case c.federation != nil:
		return condition.FalseVerdict(c.federation.reason, "%s", c.federation.message)
	case c.renderErr != nil:
		return condition.FalseVerdict(condition.CreationFailed, "rendering the configuration: %v", c.renderErr)
	}
	if len(c.asWritten) > 0 {
		return condition.TrueVerdict("configuration rendered into secret %s; used as written, as keystone-operator uses "+
			"what is no template of its parameters: %s", c.secret, strings.Join(c.asWritten, "; "))
	}
	return condition.TrueVerdict("configuration rendered into secret %s", c.secret)
}

// federationFilesOf reads the federated realms' metadata files from the Secret name of
// federatedRealmConfig (nil when it does not exist): DependencyNotFound (Warning) for
// the Secret or its key missing, InvalidInput (Error) for a key that is not a JSON
// object of file names.
func federationFilesOf(name string, secret *corev1.Secret) (map[string]string, *inputProblem) {
	if missing := missingKeys(name, secret, FederationConfigKey); missing != "" {
		return nil, &inputProblem{condition.DependencyNotFound, "federatedRealmConfig: " + missing}
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(secret.Data[FederationConfigKey], &raw); err != nil {
		return nil, &inputProblem{condition.InvalidInput, fmt.Sprintf("federatedRealmConfig: key %s of secret %s is not a JSON object of file names: %v",
			FederationConfigKey, name, err)}
	}
	files := make(map[string]string, len(raw))
	for file, content := range raw {
		files[file] = string(content)
	}
	return files, nil
}
