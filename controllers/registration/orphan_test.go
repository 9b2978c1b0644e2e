package registration

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/internal/reconciler"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestAdminMissingVerdict(t *testing.T) {
	g := NewWithT(t)
	api := &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Name: "keystone"}, Spec: keystonev1.KeystoneAPISpec{Secret: "osp-secret"}}
	api.Spec.PasswordSelectors.Admin = "AdminPassword"
	v := AdminMissingVerdict(api, "")
	g.Expect([]any{v.True, v.Reason, v.Message}).To(Equal([]any{false, condition.DependencyNotFound,
		"admin secret osp-secret with key AdminPassword of KeystoneAPI keystone not found"}))
	g.Expect(AdminMissingVerdict(api, "revoking").Message).To(Equal(
		"revoking: admin secret osp-secret with key AdminPassword of KeystoneAPI keystone not found"))
}

func TestPasswordMissingVerdict(t *testing.T) {
	v := PasswordMissingVerdict("osp-secret", "GlancePassword")
	NewWithT(t).Expect([]any{v.True, v.Reason, v.Message}).To(Equal([]any{false, condition.DependencyNotFound,
		"secret osp-secret with key GlancePassword not found"}))
}

func TestOrphaning(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	const grace = 5 * time.Minute
	annotated := map[string]string{OrphanAnnotation: "true"}
	deleted := &metav1.Time{Time: now.Add(-time.Hour)}
	svc := func(annotations map[string]string, deleting bool) *keystonev1.KeystoneService {
		s := &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Name: "glance", Annotations: annotations}}
		if deleting {
			s.DeletionTimestamp = deleted
		}
		return s
	}
	api := func(annotations map[string]string, deletedAgo time.Duration) *keystonev1.KeystoneAPI {
		a := &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Annotations: annotations}}
		if deletedAgo > 0 {
			a.DeletionTimestamp = &metav1.Time{Time: now.Add(-deletedAgo)}
		}
		return a
	}
	deletingEP := &keystonev1.KeystoneEndpoint{ObjectMeta: metav1.ObjectMeta{Name: "glance", DeletionTimestamp: deleted}}
	// What gophercloud returns when Keystone does not answer: the HTTP client's error.
	refused := &url.Error{Op: "Post", URL: "https://keystone:5000/v3/auth/tokens", Err: errors.New("connection refused")}
	kubeRefused := &url.Error{Op: "Get", URL: "https://10.96.0.1:443/api/v1/namespaces/openstack/secrets", Err: errors.New("connection refused")}
	notFoundInKube := apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, "osp-secret")
	gone := &identity.CredentialsGoneError{What: "admin secret osp-secret not found, and no copy"}
	unauthorized := gophercloud.ErrUnexpectedResponseCode{Actual: http.StatusUnauthorized}
	conflict := gophercloud.ErrUnexpectedResponseCode{Actual: http.StatusConflict}
	long, short := now.Add(-grace), now.Add(-time.Minute)
	unreachableSince := ", and Keystone unreachable or refusing since " + long.Format(time.RFC3339)
	tests := []struct {
		name     string
		o        Orphan
		want     string
		wantWait time.Duration
	}{
		{"nothing annotated: it waits", Orphan{Object: svc(nil, true), API: api(nil, 0), Err: refused, FailingSince: long}, "", 0},
		{"the object annotated, Keystone unreachable for the grace", Orphan{Object: svc(annotated, true), API: api(nil, 0), Err: refused, FailingSince: long},
			"KeystoneService glance annotated " + OrphanAnnotation + unreachableSince, 0},
		{"refusing the operator's credentials counts", Orphan{Object: svc(annotated, true), API: api(nil, 0), Err: unauthorized, FailingSince: long},
			"KeystoneService glance annotated " + OrphanAnnotation + unreachableSince, 0},
		{"unreachable for less than the grace: it waits, saying how long", Orphan{Object: svc(annotated, true), API: api(nil, 0), Err: refused,
			FailingSince: short}, "", grace - time.Minute},
		{"a refusal of the request itself never orphans", Orphan{Object: svc(annotated, true), API: api(nil, 0), Err: conflict, FailingSince: long}, "", 0},
		{"not during a deletion (a serviceName change)", Orphan{Object: svc(annotated, false), API: api(nil, 0), Err: refused, FailingSince: long}, "", 0},
		{"the KeystoneService an endpoint is under", Orphan{Object: deletingEP, API: api(nil, 0), Also: []client.Object{svc(annotated, false)},
			Err: refused, FailingSince: long}, "KeystoneService glance annotated " + OrphanAnnotation + unreachableSince, 0},
		{"the KeystoneAPI annotated, not being deleted: it covers nothing", Orphan{Object: svc(nil, true), API: api(annotated, 0), Err: refused,
			FailingSince: long}, "", 0},
		{"the KeystoneAPI annotated while it is deleted", Orphan{Object: svc(nil, false), API: api(annotated, time.Minute), Err: refused,
			FailingSince: long}, "KeystoneAPI keystone annotated " + OrphanAnnotation + unreachableSince, 0},
		{"the KeystoneAPI deleting for less than OrphanAfter", Orphan{Object: svc(nil, false), API: api(nil, OrphanAfter-time.Second), Err: conflict,
			FailingSince: long}, "", 0},
		{"the KeystoneAPI deleting for OrphanAfter, whatever the error", Orphan{Object: svc(nil, false), API: api(nil, OrphanAfter), Err: conflict,
			FailingSince: now}, "KeystoneAPI keystone has been deleting for more than 10m0s", 0},
		{"no KeystoneAPI, not annotated: it waits", Orphan{Object: svc(nil, true), Err: refused, FailingSince: long}, "", 0},
		{"another value than true", Orphan{Object: svc(map[string]string{OrphanAnnotation: "yes"}, true), API: api(nil, 0), Err: refused,
			FailingSince: long}, "", 0},
		{"Keystone's host not answering counts", Orphan{Object: svc(annotated, true), Err: refused, At: "https://keystone:5000",
			FailingSince: long}, "KeystoneService glance annotated " + OrphanAnnotation + unreachableSince, 0},
		{"the Kubernetes API not answering is not Keystone unreachable", Orphan{Object: svc(annotated, true), Err: kubeRefused,
			At: "https://keystone:5000", FailingSince: long}, "", 0},
		{"an error of the Kubernetes API is not Keystone's", Orphan{Object: svc(annotated, true), Err: notFoundInKube, FailingSince: long}, "", 0},
		{"the admin's password gone counts", Orphan{Object: svc(annotated, true), Err: gone, FailingSince: long},
			"KeystoneService glance annotated " + OrphanAnnotation + unreachableSince, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			why, wait := Orphaning(tt.o, now, grace)
			NewWithT(t).Expect([]any{why, wait}).To(Equal([]any{tt.want, tt.wantWait}))
		})
	}
}

func TestGiveUp(t *testing.T) {
	const step lc.Type = "KeystoneServiceReady"
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	failed := fmt.Errorf("deregistering glance: %w", &url.Error{Op: "Delete", URL: "https://keystone/v3/services/1",
		Err: errors.New("connection refused")})
	// begin starts a round whose deletion has found Keystone unreachable since failingSince.
	begin := func(failingSince time.Time) (*Session, *record.FakeRecorder) {
		saved := lc.Conditions{{Type: step, Status: corev1.ConditionFalse, LastTransitionTime: metav1.NewTime(now.Add(-24 * time.Hour))}}
		round := condition.Steps{step}.Begin(saved, now)
		round.MarkFalse(step, condition.ServiceUnavailable, "Keystone at https://keystone: connection refused")
		rec := record.NewFakeRecorder(4)
		failures := NewKeystoneFailures()
		failures.Observe("uid-glance", failingSince, true)
		b := Base{Clock: clocktesting.NewFakePassiveClock(now), Reporter: reconciler.Reporter{Recorder: rec}, Failures: failures}
		s := b.Begin(round)
		s.Admin.URL = "https://keystone"
		return &s, rec
	}
	deleting := func(annotations map[string]string) *keystonev1.KeystoneService {
		return &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Name: "glance", UID: "uid-glance", Annotations: annotations,
			DeletionTimestamp: &metav1.Time{Time: now}}}
	}

	g := NewWithT(t)
	s, rec := begin(now.Add(-time.Hour))
	err := s.GiveUp(step, deleting(nil), nil, "service glance", failed)
	g.Expect(err).To(MatchError(failed), "retried while nothing lets it orphan")
	g.Expect(s.Round.Get(step).Message).To(Equal("Keystone at https://keystone: connection refused; to finish deleting and leave " +
		"service glance valid in Keystone once Keystone has been unreachable or refusing for 5m0s, annotate this object " + OrphanAnnotation + "=true"))
	g.Expect(s.Round.Get(step).Severity).To(Equal(lc.SeverityWarning))
	g.Expect(rec.Events).To(BeEmpty())

	s, rec = begin(now.Add(-time.Minute))
	err = s.GiveUp(step, deleting(map[string]string{OrphanAnnotation: "true"}), nil, "service glance", failed)
	g.Expect(err).To(MatchError(failed), "annotated, Keystone unreachable for a minute only")
	g.Expect(s.Round.Get(step).Message).To(HaveSuffix("; annotated " + OrphanAnnotation +
		": service glance stays valid in Keystone if it is still unreachable in 4m0s"))
	g.Expect(rec.Events).To(BeEmpty())

	s, _ = begin(now)
	api := &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Name: "keystone", DeletionTimestamp: &metav1.Time{Time: now}}}
	err = s.GiveUp(step, &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Name: "glance", UID: "uid-glance"}}, api, "service glance",
		reconcile.TerminalError(failed))
	g.Expect(err).To(HaveOccurred())
	g.Expect(errors.Is(err, reconcile.TerminalError(nil))).To(BeFalse(), "a refusal is retried while the KeystoneAPI goes: OrphanAfter must come")

	s, rec = begin(now.Add(-5 * time.Minute))
	api.Status.APIEndpoints = map[string]string{keystonev1.EndpointInternal: "https://keystone-internal"}
	err = s.GiveUp(step, deleting(map[string]string{OrphanAnnotation: "true"}), api, "service glance", failed)
	g.Expect(err).NotTo(HaveOccurred(), "the deletion goes on")
	g.Expect(rec.Events).To(Receive(Equal(corev1.EventTypeWarning + " Orphaned service glance left valid in Keystone at https://keystone-internal " +
		"(KeystoneService glance annotated " + OrphanAnnotation + ", and Keystone unreachable or refusing since 2026-11-26T09:55:00Z): " + failed.Error())))
}

// TestKeystoneFailures: the grace counts from the deletion's first attempt that found
// Keystone unreachable, not from when its step turned False (a deletion waiting hours
// for the data plane is False all along), and starts again after an attempt that got
// another answer.
func TestKeystoneFailures(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	at := t0.Add
	type attempt struct {
		at          time.Duration
		unreachable bool
		since       time.Duration // what Observe answers, from t0
	}
	tests := []struct {
		name     string
		attempts []attempt
	}{
		{"the first failure starts the count", []attempt{{0, true, 0}, {time.Minute, true, 0}, {10 * time.Minute, true, 0}}},
		{"another answer between starts it again", []attempt{{0, true, 0}, {time.Minute, false, time.Minute},
			{2 * time.Minute, true, 2 * time.Minute}, {9 * time.Minute, true, 2 * time.Minute}}},
		{"a run not seen for over an hour is forgotten", []attempt{{0, true, 0}, {2 * time.Hour, true, 2 * time.Hour}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			f := NewKeystoneFailures()
			for _, a := range tt.attempts {
				g.Expect(f.Observe("uid", at(a.at), a.unreachable)).To(Equal(at(a.since)), "attempt at %s", a.at)
			}
		})
	}
	g := NewWithT(t)
	f := NewKeystoneFailures()
	f.Observe("a", t0, true)
	f.Forget("a")
	g.Expect(f.Observe("a", at(time.Hour), true)).To(Equal(at(time.Hour)), "forgotten once the deletion is over")
	g.Expect((*KeystoneFailures)(nil).Observe("a", t0, true)).To(Equal(t0), "nothing remembered: no grace elapses")
}

// TestGraceFromKeystonesFirstFailure: a KeystoneService whose deletion waited an hour
// for its endpoints (its step False all that time) is not orphaned at Keystone's first
// 503: the grace starts then.
func TestGraceFromKeystonesFirstFailure(t *testing.T) {
	const step lc.Type = "KeystoneServiceReady"
	g := NewWithT(t)
	start := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	clock := clocktesting.NewFakePassiveClock(start)
	failures := NewKeystoneFailures()
	svc := &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Name: "glance", UID: "uid-glance",
		Annotations: map[string]string{OrphanAnnotation: "true"}, DeletionTimestamp: &metav1.Time{Time: start.Add(-time.Hour)}}}
	unavailable := fmt.Errorf("deregistering glance: %w", gophercloud.ErrUnexpectedResponseCode{Actual: http.StatusServiceUnavailable,
		URL: "https://keystone/v3/services/1"})
	attempt := func() error {
		// The step has been False for an hour: waiting for its endpoints.
		saved := lc.Conditions{{Type: step, Status: corev1.ConditionFalse, Reason: "Requested",
			LastTransitionTime: metav1.NewTime(start.Add(-time.Hour))}}
		round := condition.Steps{step}.Begin(saved, clock.Now())
		round.MarkFalse(step, condition.ServiceUnavailable, "Keystone at https://keystone: 503")
		b := Base{Clock: clock, Reporter: reconciler.Reporter{Recorder: record.NewFakeRecorder(4)}, Failures: failures}
		s := b.Begin(round)
		s.Admin.URL = "https://keystone"
		return s.GiveUp(step, svc, nil, "service glance", unavailable)
	}
	g.Expect(attempt()).To(HaveOccurred(), "Keystone's first 503: the grace starts")
	clock.SetTime(start.Add(DefaultOrphanGrace - time.Second))
	g.Expect(attempt()).To(HaveOccurred(), "not yet")
	clock.SetTime(start.Add(DefaultOrphanGrace))
	g.Expect(attempt()).To(Succeed(), "the grace has passed since Keystone's first failure: orphaned")
}
