package keystoneapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/access"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	ctrl "sigs.k8s.io/controller-runtime"
)

// ExternalRecheckInterval is how soon an external Keystone that could not be reached
// is tried again: it cannot be watched.
const ExternalRecheckInterval = 10 * time.Second

// ExternalConfirmInterval is how long a successful external-mode check stands for a
// round that changed none of its inputs: the rounds the namespace's registrations wake
// (RegistrationsReady) do not each authenticate at Keystone.
const ExternalConfirmInterval = 10 * time.Minute

// externalCheck is a successful external-mode check: what it checked (the URL, admin,
// password, CA bundle and the object's generation and annotations, so that an edit or a
// touch checks again), and when.
type externalCheck struct {
	key string
	at  time.Time
}

// externalCheckKey is what an external-mode check depends on, as a digest.
func externalCheckKey(s *scope, url string) string {
	api := s.api
	h := sha256.New()
	for _, part := range []string{url, api.Spec.AdminUser, api.Spec.AdminProject, s.adminPassword, string(s.caBundle),
		strconv.FormatInt(api.Generation, 10)} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	// The operator's own record of a refused login is not a touch (access.AdminSource).
	keys := slices.DeleteFunc(slices.Sorted(maps.Keys(api.Annotations)), func(k string) bool {
		return k == access.AdminLoginRefusedAnnotation
	})
	for _, k := range keys {
		h.Write([]byte(k + "=" + api.Annotations[k]))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// reconcileExternalEndpoint marks KeystoneEndpointReady in external mode
// (externalVerdict): the admin can authenticate at the internal override URL.
func (r *Reconciler) reconcileExternalEndpoint(ctx context.Context, s *scope) (ctrl.Result, error) {
	api := s.api
	step := keystonev1.KeystoneAPIEndpointReady
	api.Status.APIEndpoints = deploy.Endpoints(api)
	api.Status.Region = api.Spec.Region
	url := api.Status.APIEndpoints[keystonev1.EndpointInternal]
	key, now := externalCheckKey(s, url), r.Clock.Now()
	if v, ok := r.verified.Load(api.UID); ok && v.(externalCheck).key == key && now.Sub(v.(externalCheck).at) < ExternalConfirmInterval {
		s.round.Apply(step, externalVerdict(api, url, nil))
		return ctrl.Result{}, nil
	}
	r.verified.Delete(api.UID)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	v := externalVerdict(api, url, r.checkExternal(ctx, s, url))
	s.round.Apply(step, v)
	switch {
	case v.True:
		r.verified.Store(api.UID, externalCheck{key: key, at: now})
	case v.Reason == condition.ServiceUnavailable || v.Reason == condition.DependencyNotFound:
		// An unreachable Keystone, or a region still to be made there, cannot be watched:
		// tried again.
		return ctrl.Result{RequeueAfter: ExternalRecheckInterval}, nil
	}
	// Refused credentials wait for the spec or the Secret to change.
	return ctrl.Result{}, nil
}

// checkExternal logs the admin in at url afresh, verifying Keystone's certificate
// against the KeystoneAPI's CA bundle when it names one, through the operator's memory of
// refused logins (a password Keystone refused is not tried again until its Secret, or
// the KeystoneAPI itself, changes: access.AdminSource; every refusal counts towards
// Keystone's lockout, and whoever may edit the KeystoneAPI is Keystone's admin anyway),
// and reads the region the KeystoneAPI registers endpoints in: a
// *missingRegionError when Keystone has none of that name (its registrations would get a
// 400 for each endpoint). A login that works clears the refusals of that password, so
// the registrations log in again too, and records the admin user's ID with url
// (status.verifiedAdmin).
func (r *Reconciler) checkExternal(ctx context.Context, s *scope, url string) error {
	api := s.api
	kc, err := r.Keystone.Check(ctx, access.AdminAt(api, url, s.adminPassword, access.AdminSource(api, s.adminSource), s.caBundle))
	if err != nil {
		return err
	}
	// Barred to every other namespace's registrations at this Keystone
	// (registration.OtherAdmins).
	if id := kc.UserID(); id != "" {
		api.Status.VerifiedAdmin = &keystonev1.VerifiedAdmin{ID: id, Endpoint: url}
	}
	found, err := kc.RegionExists(ctx, api.Spec.Region)
	if err == nil && !found {
		return &missingRegionError{region: api.Spec.Region}
	}
	return err
}

// missingRegionError says Keystone has no region named region.
type missingRegionError struct{ region string }

func (e *missingRegionError) Error() string { return "no region " + e.region }

// externalVerdict is KeystoneEndpointReady in external mode from authenticating the
// admin at url and reading the region (err: how it failed): a Keystone that refuses the
// credentials is InvalidInput (Error), one without the spec's region DependencyNotFound
// (Warning: an admin creates it, with the command said), one that cannot be reached
// ServiceUnavailable (Warning).
func externalVerdict(api *keystonev1.KeystoneAPI, url string, err error) condition.Verdict {
	var missing *missingRegionError
	switch {
	case err == nil:
		return condition.TrueVerdict("admin %s authenticated at %s, region %s exists", api.Spec.AdminUser, url, api.Spec.Region)
	case errors.As(err, &missing):
		return condition.FalseVerdict(condition.DependencyNotFound, "Keystone at %s has no region %s, which this KeystoneAPI's "+
			"registrations put their endpoints in: create it (openstack region create %s), or set spec.region to one it has",
			url, missing.region, missing.region)
	case identity.StatusCode(err) == http.StatusUnauthorized:
		recorded := ""
		if refused, ok := identity.LoginRefused(err); ok && refused.RecordedOn != "" {
			recorded = " (the refusal is recorded on this KeystoneAPI, annotation " + access.AdminLoginRefusedAnnotation +
				", so that a restart does not send that login again)"
		}
		return condition.FalseVerdict(condition.InvalidInput, "Keystone at %s refused the credentials of admin %s in project %s; "+
			"tried again when the secret %s or this KeystoneAPI changes, not before: every refusal counts towards Keystone's "+
			"lockout%s", url, api.Spec.AdminUser, api.Spec.AdminProject, api.Spec.Secret, recorded)
	}
	return condition.FalseVerdict(condition.ServiceUnavailable, "Keystone at %s: %v", url, err)
}
