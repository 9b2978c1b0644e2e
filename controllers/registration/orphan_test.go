package registration

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/reconciler"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	refused := errors.New("connection refused")
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
	failed := errors.New("Keystone at https://keystone: connection refused")
	begin := func(falseSince time.Time) (*Session, *record.FakeRecorder) {
		saved := lc.Conditions{{Type: step, Status: corev1.ConditionFalse, LastTransitionTime: metav1.NewTime(falseSince)}}
		round := condition.Steps{step}.Begin(saved, now)
		round.MarkFalse(step, condition.ServiceUnavailable, "Keystone at https://keystone: connection refused")
		rec := record.NewFakeRecorder(4)
		b := Base{Clock: clocktesting.NewFakePassiveClock(now), Reporter: reconciler.Reporter{Recorder: rec}}
		s := b.Begin(round)
		return &s, rec
	}
	deleting := func(annotations map[string]string) *keystonev1.KeystoneService {
		return &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Name: "glance", Annotations: annotations,
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
	err = s.GiveUp(step, &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Name: "glance"}}, api, "service glance",
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
