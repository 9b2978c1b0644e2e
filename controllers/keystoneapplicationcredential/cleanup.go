package keystoneapplicationcredential

import (
	"context"
	"fmt"
	"strings"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/finalizers"
	"github.com/keystone-stepwise/keystone-operator/internal/reconciler"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// reconcileCleanup marks ApplicationCredentialCleanupReady (cleanupVerdict): every
// credential but the current one is revoked (and its Secret deleted) once no consumer
// holds a finalizer on its Secret and, for a data plane service, every NodeSet deployed
// the current Secrets; until then it is kept, and the step says for whom.
func (r *Reconciler) reconcileCleanup(ctx context.Context, s *scope) (ctrl.Result, error) {
	step := keystonev1.KeystoneApplicationCredentialCleanupReady
	ac := s.ac
	secrets, err := r.ownedSecrets(ctx, ac)
	if err != nil {
		return ctrl.Result{}, err
	}
	// The data plane is asked once, at the first credential it could keep: a round with
	// nothing to revoke reads no NodeSet.
	dataPlaneWhy, dataPlaneRead := "", false
	var kept, revoked []string
	previousFound := false
	for i := range secrets {
		secret := &secrets[i]
		if secret.Name == ac.Status.SecretName {
			continue
		}
		previousFound = previousFound || secret.Name == ac.Status.PreviousSecretName
		if holders := consumers(secret); len(holders) > 0 {
			kept = append(kept, fmt.Sprintf("secret %s is used by %s", secret.Name, strings.Join(holders, ", ")))
			continue
		}
		if !dataPlaneRead {
			if dataPlaneWhy, err = r.dataPlaneLag(ctx, ac); err != nil {
				return ctrl.Result{}, err
			}
			dataPlaneRead = true
		}
		if dataPlaneWhy != "" {
			kept = append(kept, fmt.Sprintf("secret %s: %s", secret.Name, dataPlaneWhy))
			continue
		}
		done, err := r.revokeSecret(ctx, s, secret)
		if err != nil {
			return s.FailedAs(s.user, step, credentialFailed, err)
		}
		if done {
			revoked = append(revoked, fmt.Sprintf("%s (secret %s)", secret.Data[keystonev1.ACIDSecretKey], secret.Name))
		}
		if secret.Name == ac.Status.PreviousSecretName {
			previousFound = false
		}
	}
	if !previousFound {
		ac.Status.PreviousSecretName, ac.Status.PreviousACID = "", ""
	}
	result := r.heldResult(s, kept, dataPlaneWhy != "")
	s.Round.Apply(step, cleanupVerdict(revoked, kept))
	return result, nil
}

// heldResult reports the credentials kept (reportHeld) and asks for the round that
// looks at them again: when the held ones turn Warning, and, while the data plane lags
// (dataPlane), after DataPlaneRecheckInterval, as keystone-operator looks again every
// minute: what ends the lag need not change a NodeSet (a Secret it deployed made
// again as it was), and a NodeSet kind installed after the set-up is not watched.
func (r *Reconciler) heldResult(s *scope, kept []string, dataPlane bool) ctrl.Result {
	result := ctrl.Result{RequeueAfter: r.reportHeld(s, kept)}
	if dataPlane {
		result = reconciler.MergeResults(result, ctrl.Result{RequeueAfter: DataPlaneRecheckInterval})
	}
	return result
}

// dataPlaneLag says why earlier credentials must wait for the data plane; "" when they
// need not (not a data plane service, no NodeSet kind, every NodeSet in sync). The kind
// is looked for at each call, as keystone-operator does: one installed after the
// operator started is waited for too (without a watch: DataPlaneRecheckInterval).
func (r *Reconciler) dataPlaneLag(ctx context.Context, ac *keystonev1.KeystoneApplicationCredential) (string, error) {
	if !ac.IsEDPMService() {
		return "", nil
	}
	inSync, why, err := nodeSetsInSync(ctx, r.Client, ac.Namespace)
	if err != nil || inSync {
		return "", err
	}
	return "waiting for the data plane: " + why, nil
}

// consumers lists the finalizers on a credential's Secret other than its protection:
// the consumers that still use it.
func consumers(secret *corev1.Secret) []string {
	var out []string
	for _, f := range secret.Finalizers {
		if f != ProtectionFinalizer && f != upstreamProtectionFinalizer {
			out = append(out, f)
		}
	}
	return out
}

// revokeSecret revokes the credential of an earlier Secret in Keystone, then lets the
// Secret go. A credential not provably this object's (revocable) is not revoked: the
// Secret, which says it is, goes, and a Warning Event says what stays valid. done tells
// whether a credential was revoked.
func (r *Reconciler) revokeSecret(ctx context.Context, s *scope, secret *corev1.Secret) (done bool, err error) {
	id := string(secret.Data[keystonev1.ACIDSecretKey])
	admin, err := r.Keystone.Get(ctx, s.Admin)
	if err != nil {
		return false, err
	}
	userID := ""
	if s.userClient != nil {
		userID = s.userClient.UserID()
	}
	ok, why, err := r.revocable(ctx, s.ac, admin, userID, id)
	if err != nil {
		return false, err
	}
	if ok {
		if err := admin.DeleteAppCred(ctx, id); err != nil {
			return false, err
		}
	} else {
		r.Reporter.Recorder.Eventf(s.ac, corev1.EventTypeWarning, "CredentialNotRevoked",
			"secret %s names %s: not revoked, the secret is deleted", secret.Name, why)
	}
	if err := finalizers.Remove(ctx, r.Client, secret, ProtectionFinalizer, upstreamProtectionFinalizer); err != nil {
		return false, err
	}
	if err := r.Delete(ctx, secret); client.IgnoreNotFound(err) != nil {
		return false, fmt.Errorf("deleting secret %s: %w", secret.Name, err)
	}
	return ok, nil
}

// revoke revokes the credential id ("": none), which the status records, with the
// admin's credentials: the admin may revoke any user's, and Keystone finds it by its ID
// alone, so a credential of a user named before a change of userName goes too, and
// "already gone" is true.
func (r *Reconciler) revoke(ctx context.Context, s *scope, id string) error {
	if id == "" {
		return nil
	}
	admin, err := r.Keystone.Get(ctx, s.Admin)
	if err != nil {
		return err
	}
	return admin.DeleteAppCred(ctx, id)
}

// reportHeld reports PreviousCredentialReleased while earlier credentials are kept (kept
// says by whom), and returns when it is to turn Warning (0 for never), for a round then.
func (r *Reconciler) reportHeld(s *scope, kept []string) time.Duration {
	if len(kept) == 0 {
		return 0
	}
	v, wait := heldVerdict(s.ac, kept, r.Clock.Now())
	s.Round.Report(keystonev1.KeystoneApplicationCredentialPreviousReleased, v)
	return wait
}

// HeldWarningAfter is how long after a rotation the credentials it replaced may be held
// by their consumers before PreviousCredentialReleased turns Warning; at most half the
// grace period, so that the Warning comes well before they expire.
const HeldWarningAfter = 24 * time.Hour
