package registration

import (
	"errors"
	"testing"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
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
	annotated := map[string]string{OrphanAnnotation: "true"}
	svc := func(annotations map[string]string) *keystonev1.KeystoneService {
		return &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Name: "glance", Annotations: annotations}}
	}
	api := func(annotations map[string]string, deletedAgo time.Duration) *keystonev1.KeystoneAPI {
		a := &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Annotations: annotations}}
		if deletedAgo > 0 {
			a.DeletionTimestamp = &metav1.Time{Time: now.Add(-deletedAgo)}
		}
		return a
	}
	ep := &keystonev1.KeystoneEndpoint{ObjectMeta: metav1.ObjectMeta{Name: "glance"}}
	tests := []struct {
		name string
		obj  client.Object
		api  *keystonev1.KeystoneAPI
		also []client.Object
		want string
	}{
		{"nothing annotated: it waits", svc(nil), api(nil, 0), nil, ""},
		{"the object annotated", svc(annotated), api(nil, 0), nil, "KeystoneService glance annotated " + OrphanAnnotation},
		{"the KeystoneService an endpoint is under", ep, api(nil, 0), []client.Object{svc(annotated)},
			"KeystoneService glance annotated " + OrphanAnnotation},
		{"the KeystoneAPI annotated", svc(nil), api(annotated, 0), nil, "KeystoneAPI keystone annotated " + OrphanAnnotation},
		{"the KeystoneAPI deleting for less than OrphanAfter", svc(nil), api(nil, OrphanAfter-time.Second), nil, ""},
		{"the KeystoneAPI deleting for OrphanAfter", svc(nil), api(nil, OrphanAfter), nil,
			"KeystoneAPI keystone has been deleting for more than 10m0s"},
		{"no KeystoneAPI: it waits", svc(nil), nil, nil, ""},
		{"another value than true", svc(map[string]string{OrphanAnnotation: "yes"}), api(nil, 0), nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(Orphaning(tt.obj, tt.api, now, tt.also...)).To(Equal(tt.want))
		})
	}
}

func TestGiveUp(t *testing.T) {
	const step lc.Type = "KeystoneServiceReady"
	now := time.Now()
	failed := errors.New("Keystone at https://keystone: connection refused")
	begin := func() *condition.Round {
		round := condition.Steps{step}.Begin(nil, now)
		round.MarkFalse(step, condition.ServiceUnavailable, "Keystone at https://keystone: connection refused")
		return round
	}

	g := NewWithT(t)
	round, rec := begin(), record.NewFakeRecorder(4)
	err := GiveUp(rec, round, step, &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Name: "glance"}}, nil, now, "service glance", failed)
	g.Expect(err).To(MatchError(failed), "retried while nothing lets it orphan")
	g.Expect(round.Get(step).Message).To(Equal("Keystone at https://keystone: connection refused; to finish deleting and leave it in " +
		"Keystone, annotate this object or the KeystoneAPI " + OrphanAnnotation + "=true"))
	g.Expect(round.Get(step).Severity).To(Equal(lc.SeverityWarning))
	g.Expect(rec.Events).To(BeEmpty())

	round = begin()
	api := &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Name: "keystone", DeletionTimestamp: &metav1.Time{Time: now}}}
	err = GiveUp(rec, round, step, &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Name: "glance"}}, api, now, "service glance",
		reconcile.TerminalError(failed))
	g.Expect(err).To(HaveOccurred())
	g.Expect(errors.Is(err, reconcile.TerminalError(nil))).To(BeFalse(), "a refusal is retried while the KeystoneAPI goes: OrphanAfter must come")

	round = begin()
	api.Status.APIEndpoints = map[string]string{keystonev1.EndpointInternal: "https://keystone-internal"}
	err = GiveUp(rec, round, step, &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Name: "glance", Annotations: map[string]string{
		OrphanAnnotation: "true"}}}, api, now, "service glance", failed)
	g.Expect(err).NotTo(HaveOccurred(), "the deletion goes on")
	g.Expect(rec.Events).To(Receive(Equal(corev1.EventTypeWarning + " Orphaned service glance left in Keystone at https://keystone-internal " +
		"(KeystoneService glance annotated " + OrphanAnnotation + "): " + failed.Error())))
}
