package keystoneapplicationcredential

import (
	"context"
	"fmt"
	"strings"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// secretName is the Secret of a credential: "ac-<service>-<credential ID>-secret".
func secretName(ac *keystonev1.KeystoneApplicationCredential, id string) string {
	return fmt.Sprintf("ac-%s-%s-secret", keystonev1.GetServiceNameFromACCR(ac.Name), strings.ReplaceAll(strings.ToLower(id), "_", "-"))
}

// createSecret writes the credential's Secret: immutable, owned, protected by a
// finalizer until the credential is revoked.
func (r *Reconciler) createSecret(ctx context.Context, ac *keystonev1.KeystoneApplicationCredential, cred *identity.AppCred,
	userID string) (*corev1.Secret, error) {
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: secretName(ac, cred.ID), Namespace: ac.Namespace,
			Annotations: map[string]string{UserIDAnnotation: userID},
			Labels:      map[string]string{keystonev1.ACSecretLabel: "true", keystonev1.ACServiceLabel: keystonev1.GetServiceNameFromACCR(ac.Name)},
			Finalizers:  []string{ProtectionFinalizer}},
		Immutable: ptr.To(true),
		Type:      corev1.SecretTypeOpaque,
		Data:      map[string][]byte{keystonev1.ACIDSecretKey: []byte(cred.ID), keystonev1.ACSecretSecretKey: []byte(cred.Secret)},
	}
	if err := controllerutil.SetControllerReference(ac, secret, r.Scheme()); err != nil {
		return nil, fmt.Errorf("owning secret %s: %w", secret.Name, err)
	}
	if err := r.Create(ctx, secret); err != nil {
		return nil, fmt.Errorf("creating secret %s: %w", secret.Name, err)
	}
	return secret, nil
}

// ownedSecrets lists the Secrets of this object's credentials, current and past: those
// it controls among the labelled ones, and the current and previous Secrets its status
// names when it controls them, labelled or not (an earlier keystone-operator wrote them
// without the service label, and a credential nobody finds is never revoked).
func (r *Reconciler) ownedSecrets(ctx context.Context, ac *keystonev1.KeystoneApplicationCredential) ([]corev1.Secret, error) {
	list := &corev1.SecretList{}
	if err := r.List(ctx, list, client.InNamespace(ac.Namespace), client.MatchingLabels{
		keystonev1.ACSecretLabel: "true", keystonev1.ACServiceLabel: keystonev1.GetServiceNameFromACCR(ac.Name)}); err != nil {
		return nil, fmt.Errorf("listing the secrets of %s: %w", ac.Name, err)
	}
	found := sets.New[string]()
	for _, s := range list.Items {
		found.Insert(s.Name)
	}
	for _, name := range []string{ac.Status.SecretName, ac.Status.PreviousSecretName} {
		if name == "" || found.Has(name) {
			continue
		}
		secret := corev1.Secret{}
		if err := r.Get(ctx, client.ObjectKey{Namespace: ac.Namespace, Name: name}, &secret); client.IgnoreNotFound(err) != nil {
			return nil, fmt.Errorf("reading secret %s: %w", name, err)
		} else if err == nil {
			found.Insert(name)
			list.Items = append(list.Items, secret)
		}
	}
	var owned []corev1.Secret
	for _, s := range list.Items {
		if ref := metav1.GetControllerOf(&s); ref != nil && ref.UID == ac.UID {
			owned = append(owned, s)
		}
	}
	return owned, nil
}

// sweepOrphans revokes the credentials this object created that neither its status
// nor any of its Secrets records: made by a round that crashed before its Secret.
func (r *Reconciler) sweepOrphans(ctx context.Context, s *scope) error {
	kc, userID := s.userClient, s.userClient.UserID()
	ids, err := kc.OwnedAppCreds(ctx, userID, r.owner(s.ac))
	if err != nil || len(ids) == 0 {
		return err
	}
	known := map[string]bool{s.ac.Status.ACID: true}
	secrets, err := r.ownedSecrets(ctx, s.ac)
	if err != nil {
		return err
	}
	for _, secret := range secrets {
		known[string(secret.Data[keystonev1.ACIDSecretKey])] = true
	}
	for _, id := range ids {
		if !known[id] {
			if err := kc.DeleteAppCred(ctx, id); err != nil {
				return err
			}
		}
	}
	return nil
}

// reconcileSecret marks ApplicationCredentialSecretReady (secretVerdict): the current
// credential's Secret holds its AC_ID and AC_SECRET.
func (r *Reconciler) reconcileSecret(ctx context.Context, s *scope) (ctrl.Result, error) {
	step := keystonev1.KeystoneApplicationCredentialSecretReady
	st := s.ac.Status
	if s.created {
		s.Round.Apply(step, secretVerdict(st, true, st.ACID))
		return ctrl.Result{}, nil
	}
	secret := &corev1.Secret{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: s.ac.Namespace, Name: st.SecretName}, secret); err != nil {
		return ctrl.Result{}, fmt.Errorf("reading secret %s: %w", st.SecretName, err)
	}
	s.Round.Apply(step, secretVerdict(st, false, string(secret.Data[keystonev1.ACIDSecretKey])))
	return ctrl.Result{}, nil
}
