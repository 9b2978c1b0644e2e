package keystoneapi

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// reconcileFernetKeys marks FernetKeysReady (keysVerdict): the keys Secret "keystone"
// exists, holds fernetMaxActiveKeys fernet keys and the credential keys, and rotates
// every fernetRotationDays. A Secret "keystone" that exists is used as it is, keys and
// rotation time (keystone-operator's, or one made by the adoption procedure of an
// existing cloud before the KeystoneAPI): new keys are made only when there are none.
// While an earlier step is not True the keys are observed, not rotated.
func (r *Reconciler) reconcileFernetKeys(ctx context.Context, s *scope) (ctrl.Result, error) {
	api := s.api
	step := keystonev1.KeystoneAPIFernetKeysReady
	maxActive := int(ptr.Deref(api.Spec.FernetMaxActiveKeys, 5))
	now := r.Clock.Now()
	var result ctrl.Result
	found := keysFound{secret: deploy.KeysSecretName(api), now: now}
	if !s.acting(step) {
		found.waiting = s.afterwards(step)
	}
	secret := &corev1.Secret{}
	err := r.Get(ctx, client.ObjectKey{Namespace: api.Namespace, Name: found.secret}, secret)
	switch {
	case apierrors.IsNotFound(err) && found.waiting == "":
		if found.created, err = r.createKeysSecret(ctx, api, maxActive, now); err != nil {
			return ctrl.Result{}, err
		}
		s.round.Apply(step, keysVerdict(found))
		return ctrl.Result{}, nil
	case err != nil:
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	repo := deploy.ReadKeys(deploy.FernetKeyPrefix, secret.Data)
	credentials := deploy.ReadKeys(deploy.CredentialKeyPrefix, secret.Data)
	keys := repo.Keys
	found.credentialKeys, found.fernetKeys = len(credentials.Indices), len(keys)
	found.problems = append(slices.Clone(repo.Problems), credentials.Problems...)
	found.sched = fernetScheduleOf(secret, ptr.Deref(api.Spec.FernetRotationDays, 1), now)
	if found.usable() && found.waiting == "" {
		renumbered := repo.Renumbered(deploy.FernetKeyPrefix)
		if found.sched.rotate || len(keys) != maxActive || found.sched.stale || len(renumbered) > 0 {
			dropped := repo.Oldest(deploy.FernetKeyPrefix, droppedCount(len(keys), maxActive, found.sched.rotate))
			if keys, err = r.writeKeys(ctx, secret, keys, maxActive, &found.sched, now); err != nil {
				return ctrl.Result{}, err
			}
			found.fernetKeys = len(keys)
			r.keysMoved(api, found.secret, renumbered, dropped)
		}
		// The next rotation: a reconcile then (in a second when it is due already).
		result.RequeueAfter = max(found.sched.due.Sub(now), time.Second)
	}
	if found.usable() {
		s.fernetRotation = found.sched.due
		s.in.CredentialKeys = &credentials
	}
	s.round.Apply(step, keysVerdict(found))
	return result, nil
}

// droppedCount is how many secondary keys bringing n keys to maxActive drops, after a
// rotation (which adds one) when rotate; never the staged key or the primary.
func droppedCount(n, maxActive int, rotate bool) int {
	if rotate {
		n++
	}
	return max(0, n-max(maxActive, 2))
}

// keysMoved says, in a Warning Event on api, which fernet keys of secret a write
// renumbered (a repository with gaps is written 0, 1, 2, ...: tokens still validate)
// and which it dropped (tokens signed with those no longer validate).
func (r *Reconciler) keysMoved(api *keystonev1.KeystoneAPI, secret string, renumbered, dropped []string) {
	if len(renumbered) > 0 {
		r.Reporter.Recorder.Eventf(api, corev1.EventTypeWarning, "FernetKeysRenumbered",
			"secret %s: %s (the keys keep their order: the primary is still the highest, and every token still validates)",
			secret, strings.Join(renumbered, ", "))
	}
	if len(dropped) > 0 {
		r.Reporter.Recorder.Eventf(api, corev1.EventTypeWarning, "FernetKeysDropped",
			"secret %s: %s dropped to keep fernetMaxActiveKeys keys: tokens signed with them no longer validate",
			secret, strings.Join(dropped, ", "))
	}
}

// fernetSchedule is when the fernet keys last rotated and rotate next.
type fernetSchedule struct {
	raw       string // the annotation as found
	malformed bool   // raw is set but not an RFC 3339 time
	stale     bool   // the annotation is missing, or under its former name: written now
	rotatedAt time.Time
	due       time.Time
	rotate    bool // due now
	days      int32
}

func fernetScheduleOf(secret *corev1.Secret, days int32, now time.Time) fernetSchedule {
	sched := fernetSchedule{raw: secret.Annotations[deploy.RotatedAtAnnotation], days: days}
	if sched.raw == "" {
		sched.raw = secret.Annotations[deploy.LegacyRotatedAtAnnotation]
		sched.stale = true
	}
	rotatedAt, err := time.Parse(time.RFC3339, sched.raw)
	sched.malformed = sched.raw != "" && err != nil
	if err != nil {
		// None (the adoption procedure's Secret), or unreadable: the keys count as
		// rotated now, and now is written back, as keystone-operator counts and writes
		// them (its ensureFernetKeys), so the primary key stays the primary and no key
		// is dropped for an annotation; the schedule goes on from now.
		rotatedAt = now
		sched.stale = true
	}
	sched.rotatedAt = rotatedAt
	sched.due = deploy.RotationDue(rotatedAt, days)
	sched.rotate = !now.Before(sched.due)
	return sched
}

// writeKeys rotates the keys when due, else resizes them to maxActive, and records
// the rotation time; sched moves to the new schedule.
func (r *Reconciler) writeKeys(ctx context.Context, secret *corev1.Secret, keys []string, maxActive int,
	sched *fernetSchedule, now time.Time) ([]string, error) {
	var err error
	if sched.rotate {
		keys, err = deploy.Rotate(keys, maxActive)
		sched.rotatedAt = now
	} else {
		keys, err = deploy.Resize(keys, maxActive)
	}
	if err != nil {
		return nil, err
	}
	patch := client.MergeFrom(secret.DeepCopy())
	secret.Data = deploy.WithFernetKeys(secret.Data, keys)
	metav1.SetMetaDataAnnotation(&secret.ObjectMeta, deploy.RotatedAtAnnotation, sched.rotatedAt.UTC().Format(time.RFC3339))
	delete(secret.Annotations, deploy.LegacyRotatedAtAnnotation)
	if err := r.Patch(ctx, secret, patch); err != nil {
		return nil, fmt.Errorf("rotating fernet keys: %w", err)
	}
	sched.due = deploy.RotationDue(sched.rotatedAt, sched.days)
	return keys, nil
}

// createKeysSecret creates the keys Secret: with the keys of this suite's former
// Secret (<name>-keys) when there is one, else with new keys. It says which.
func (r *Reconciler) createKeysSecret(ctx context.Context, api *keystonev1.KeystoneAPI, maxActive int, now time.Time) (string, error) {
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: deploy.KeysSecretName(api), Namespace: api.Namespace, Labels: deploy.Labels(api),
			Annotations: map[string]string{deploy.RotatedAtAnnotation: now.UTC().Format(time.RFC3339)}},
	}
	from := "created in"
	legacy := &corev1.Secret{}
	err := r.Get(ctx, client.ObjectKey{Namespace: api.Namespace, Name: deploy.LegacyKeysSecretName(api)}, legacy)
	switch {
	case err == nil:
		secret.Data = legacy.Data
		for _, a := range []string{deploy.LegacyRotatedAtAnnotation, deploy.RotatedAtAnnotation} {
			if v := legacy.Annotations[a]; v != "" {
				secret.Annotations[deploy.RotatedAtAnnotation] = v
			}
		}
		from = fmt.Sprintf("copied from secret %s to", legacy.Name)
	case apierrors.IsNotFound(err):
		if secret.Data, err = deploy.NewKeysData(maxActive); err != nil {
			return "", err
		}
	default:
		return "", fmt.Errorf("reading secret %s: %w", legacy.Name, err)
	}
	if err := controllerutil.SetControllerReference(api, secret, r.Scheme()); err != nil {
		return "", fmt.Errorf("owning keys secret: %w", err)
	}
	if err := r.Create(ctx, secret); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("creating keys secret: %w", err)
	}
	return from, nil
}

// removeLegacyKeys deletes this suite's former keys Secret (<name>-keys) once no pod
// template mounts it: the Deployment and the trust flush CronJob roll with "keystone".
func (r *Reconciler) removeLegacyKeys(ctx context.Context, api *keystonev1.KeystoneAPI) error {
	legacy := &corev1.Secret{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: api.Namespace, Name: deploy.LegacyKeysSecretName(api)}, legacy); err != nil {
		return client.IgnoreNotFound(err)
	}
	if err := r.Delete(ctx, legacy, client.Preconditions{UID: &legacy.UID}); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting secret %s, whose keys moved to secret %s: %w", legacy.Name, deploy.KeysSecretName(api), err)
	}
	return nil
}

// keysFound is what FernetKeysReady observed of the keys Secret.
type keysFound struct {
	secret         string // its name
	created        string // how this round made it ("" when it existed)
	credentialKeys int
	fernetKeys     int
	sched          fernetSchedule
	waiting        string // while an earlier step is not True, when the keys are rotated again; else ""
	now            time.Time
	// problems say which keys cannot be used as they are (deploy.KeyRepository.Problems).
	problems []string
}

// usable tells whether the keys may be used and rotated: Keystone takes every one of
// them, and there is a credential key. Credential keys are never made up (new ones could
// not decrypt the credential table), and Keystone without any encrypts credentials with
// its null key, a key everyone knows (keystone/credential/providers/fernet/core.py).
func (k keysFound) usable() bool {
	return k.credentialKeys > 0 && len(k.problems) == 0
}

// keysVerdict is FernetKeysReady from the keys Secret: FernetCreated (Info) the round
// it is made; InvalidInput (Error) while it lacks credential keys; an unreadable
// rotation time InvalidAnnotation (Warning: the keys count as rotated now); else True
// with the next rotation.
func keysVerdict(k keysFound) condition.Verdict {
	next := k.sched.due.UTC().Format(time.RFC3339)
	switch {
	case k.created != "":
		return condition.FalseVerdict(fernetCreated, "fernet and credential keys %s secret %s", k.created, k.secret)
	case len(k.problems) > 0:
		return condition.FalseVerdict(condition.InvalidInput, "secret %s cannot be used as it is, and nothing in it was rewritten: %s",
			k.secret, strings.Join(k.problems, "; "))
	case !k.usable():
		return condition.FalseVerdict(condition.InvalidInput, "secret %s holds no credential key (%s0, %s1, ...), "+
			"without which Keystone encrypts credentials with its null key: add the keys of the repository "+
			"Keystone's credentials were encrypted with", k.secret, deploy.CredentialKeyPrefix, deploy.CredentialKeyPrefix)
	case k.waiting != "":
		return condition.TrueVerdict("%d fernet keys in secret %s, next rotation at %s %s", k.fernetKeys, k.secret, next, k.waiting)
	case k.sched.malformed:
		return condition.FalseVerdict(invalidAnnotation, "annotation %s=%q of secret %s is not an RFC 3339 time (such as %s): "+
			"the keys count as rotated now, as keystone-operator counts them, and the next rotation is at %s",
			deploy.RotatedAtAnnotation, k.sched.raw, k.secret, k.now.UTC().Format(time.RFC3339), next)
	}
	return condition.TrueVerdict("%d fernet keys in secret %s, next rotation at %s", k.fernetKeys, k.secret, next)
}
