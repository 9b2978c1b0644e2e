package keystoneapi

import (
	"context"
	"fmt"

	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// loadPrivateState reads the private state Secret into the scope; when it is missing
// and create is set, it prepares a new one (with a new MAC key) that its first record
// creates, in one write (setPrivateValue): until a MAC is recorded, nothing depends on
// the key. See internal/deploy/private.go for why it exists. Without create, s.private
// stays nil when the Secret does not exist.
func (r *Reconciler) loadPrivateState(ctx context.Context, s *scope, create bool) error {
	api := s.api
	key := client.ObjectKey{Namespace: api.Namespace, Name: deploy.PrivateStateSecretName(api)}
	secret := &corev1.Secret{}
	err := r.Get(ctx, key, secret)
	if _, created := r.privateCreated.Load(key); apierrors.IsNotFound(err) && created {
		// The cache may not have seen our own create yet. Nobody else creates it, and
		// what existed when the manager started was in its cache from the start: a
		// Secret this process never created is not asked of the API server again.
		err = r.Reporter.Reader.Get(ctx, key, secret)
	}
	switch {
	case apierrors.IsNotFound(err) && !create:
		return nil
	case apierrors.IsNotFound(err):
		data, err := deploy.NewPrivateState()
		if err != nil {
			return err
		}
		secret = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace, Labels: deploy.Labels(api)},
			Type:       corev1.SecretTypeOpaque,
			Data:       data,
		}
		if err := controllerutil.SetControllerReference(api, secret, r.Scheme()); err != nil {
			return fmt.Errorf("owning secret %s: %w", key.Name, err)
		}
		s.privateUnsaved = true
	case err != nil:
		return fmt.Errorf("reading secret %s: %w", key.Name, err)
	case len(secret.Data[deploy.PrivateMACKey]) == 0 && create:
		// Someone removed the key: a new one makes every record stale, so the steps
		// that depend on secret values run once more.
		data, err := deploy.NewPrivateState()
		if err != nil {
			return err
		}
		patch := client.MergeFrom(secret.DeepCopy())
		secret.Data = data
		if err := r.Patch(ctx, secret, patch); err != nil {
			return fmt.Errorf("renewing secret %s: %w", key.Name, err)
		}
	}
	s.private = secret
	return nil
}

// privateValue returns an entry of the private state; "" when it or the state is missing.
func (s *scope) privateValue(key string) string {
	if s.private == nil {
		return ""
	}
	return string(s.private.Data[key])
}

// setPrivateValue records an entry of the private state (loaded before); value ""
// is a step without secret inputs, which records nothing.
func (r *Reconciler) setPrivateValue(ctx context.Context, s *scope, key, value string) error {
	if value == "" || s.privateValue(key) == value {
		return nil
	}
	if s.privateUnsaved {
		s.private.Data[key] = []byte(value)
		if err := r.Create(ctx, s.private); err != nil {
			return fmt.Errorf("creating secret %s with %s: %w", s.private.Name, key, err)
		}
		r.privateCreated.Store(client.ObjectKeyFromObject(s.private), true)
		s.privateUnsaved = false
		return nil
	}
	patch := client.MergeFrom(s.private.DeepCopy())
	s.private.Data[key] = []byte(value)
	if err := r.Patch(ctx, s.private, patch); err != nil {
		return fmt.Errorf("recording %s in secret %s: %w", key, s.private.Name, err)
	}
	return nil
}
