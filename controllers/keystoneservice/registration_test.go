package keystoneservice

import (
	"fmt"
	"testing"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// upstreamConditions are the conditions keystone-operator writes on a KeystoneService
// it registered (internal/controller/keystoneservice_controller.go, reconcileNormal:
// MarkTrue with its api/v1beta1/conditions.go messages and the spec it reconciled).
func upstreamConditions(serviceName, serviceID, user string) lc.Conditions {
	now := metav1.Now()
	return lc.Conditions{
		{Type: "KeystoneServiceOSServiceReady", Status: corev1.ConditionTrue, Reason: "Ready", LastTransitionTime: now,
			Message: fmt.Sprintf("Keystone Service %s - %s ready", serviceName, serviceID)},
		{Type: "KeystoneServiceOSUserReady", Status: corev1.ConditionTrue, Reason: "Ready", LastTransitionTime: now,
			Message: fmt.Sprintf("Keystone Service user %s ready", user)},
	}
}

// takenOver is the scope of a round of svc with keystone-operator's proof carried (carryTakeover).
func takenOver(svc *keystonev1.KeystoneService) *scope {
	round := steps.Begin(svc.Status.Conditions, time.Now())
	carryTakeover(svc, round)
	s := &scope{service: svc}
	s.Round = round
	return s
}

func TestUpstreamProof(t *testing.T) {
	cases := []struct {
		name              string
		conditions        lc.Conditions
		serviceID, user   string
		claimsID, claimsU string
	}{
		{"keystone-operator's record", upstreamConditions("placement", "4a7f", "placement"), "4a7f", "placement", "4a7f", "placement"},
		{"a service name with the separator in it", upstreamConditions("a - b", "9c1e", "svc user"), "9c1e", "svc user", "9c1e", "svc user"},
		{"not True: nothing proven", func() lc.Conditions {
			c := upstreamConditions("placement", "4a7f", "placement")
			c[0].Status, c[1].Status = corev1.ConditionFalse, corev1.ConditionUnknown
			return c
		}(), "", "", "", ""},
		{"another message: nothing proven", lc.Conditions{
			{Type: "KeystoneServiceOSServiceReady", Status: corev1.ConditionTrue, Message: "Service created"},
			{Type: "KeystoneServiceOSUserReady", Status: corev1.ConditionTrue, Message: "User created"}},
			"", "", "", ""},
		{"none", nil, "", "", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := NewWithT(t)
			svc := &keystonev1.KeystoneService{Spec: keystonev1.KeystoneServiceSpec{ServiceUser: "renamed"},
				Status: keystonev1.KeystoneServiceStatus{Conditions: c.conditions}}
			g.Expect(upstreamProof(svc, upstreamServiceReady)).To(Equal(c.serviceID))
			g.Expect(upstreamProof(svc, upstreamUserReady)).To(Equal(c.user))

			s := takenOver(svc)
			api := &keystonev1.KeystoneAPI{Spec: keystonev1.KeystoneAPISpec{AdminUser: "admin"}}
			g.Expect(s.provenService()).To(Equal(c.claimsID))
			claim := s.claimsService(api, c.claimsID)
			g.Expect(claim != nil).To(Equal(c.claimsID != ""))
			if claim != nil {
				g.Expect(claim(&identity.Service{ID: c.claimsID, Type: "placement", Name: "placement"})).To(BeTrue())
				g.Expect(claim(&identity.Service{ID: "other", Type: "placement", Name: "placement"})).To(BeFalse())
			}
			g.Expect(s.claimsService(api, "other")).To(BeNil())
			g.Expect(s.claimsUser(api, c.claimsU)).To(Equal(c.claimsU != ""), "the user keystone-operator named, whatever the spec says now")
			g.Expect(s.claimsUser(api, "renamed")).To(BeFalse(), "the spec's serviceUser is not what keystone-operator registered")
		})
	}
}

func TestUpstreamProofNeverTheAdmin(t *testing.T) {
	g := NewWithT(t)
	s := takenOver(&keystonev1.KeystoneService{Status: keystonev1.KeystoneServiceStatus{Conditions: upstreamConditions("x", "1", "admin")}})
	api := &keystonev1.KeystoneAPI{Spec: keystonev1.KeystoneAPISpec{AdminUser: "admin"}}
	g.Expect(s.claimsUser(api, "admin")).To(BeFalse())
}

// TestUpstreamProofClaimsOnlyWhatThePolicyAllows: keystone-operator's proof names an ID,
// which it also wrote for a service it found and used (Keystone's own identity service,
// another namespace's). A namespace whose KeystoneAPI was narrowed since claims, and so
// deletes, only what it may register now, judged on the service as Keystone has it.
func TestUpstreamProofClaimsOnlyWhatThePolicyAllows(t *testing.T) {
	g := NewWithT(t)
	s := takenOver(&keystonev1.KeystoneService{Status: keystonev1.KeystoneServiceStatus{
		Conditions: upstreamConditions("keystone", "4a7f", "tenant-a-glance")}})
	api := &keystonev1.KeystoneAPI{Spec: keystonev1.KeystoneAPISpec{AdminUser: "tenant-a-operator",
		RegistrationPolicy: &keystonev1.RegistrationPolicy{Services: []string{"*/tenant-a-*"}, Users: []string{"tenant-a-*"}}}}
	claim := s.claimsService(api, "4a7f")
	g.Expect(claim).NotTo(BeNil())
	g.Expect(claim(&identity.Service{ID: "4a7f", Type: "identity", Name: "keystone"})).To(BeFalse(),
		"Keystone's identity service, which the proof names, is not the namespace's to claim")
	g.Expect(claim(&identity.Service{ID: "4a7f", Type: "image", Name: "tenant-a-glance"})).To(BeTrue())
	g.Expect(s.claimsUser(api, "tenant-a-glance")).To(BeTrue())

	t.Log("a user the namespace may not name, or its admin in any case, is never claimed")
	s = takenOver(&keystonev1.KeystoneService{Status: keystonev1.KeystoneServiceStatus{
		Conditions: upstreamConditions("tenant-a-glance", "4a7f", "nova")}})
	g.Expect(s.claimsUser(api, "nova")).To(BeFalse())
	s = takenOver(&keystonev1.KeystoneService{Status: keystonev1.KeystoneServiceStatus{
		Conditions: upstreamConditions("tenant-a-glance", "4a7f", "Tenant-A-Operator")}})
	g.Expect(s.claimsUser(api, "Tenant-A-Operator")).To(BeFalse())
}

func TestClaimedDropsOnlyWhatItNames(t *testing.T) {
	g := NewWithT(t)
	s := takenOver(&keystonev1.KeystoneService{Status: keystonev1.KeystoneServiceStatus{Conditions: upstreamConditions("placement", "4a7f", "placement")}})
	round := s.Round
	s.claimed(upstreamUserReady, "other", true)
	s.claimed(upstreamServiceReady, "4a7f", false)
	g.Expect(round.Carried(upstreamUserReady)).To(BeTrue(), "another user settled: the proof stays")
	g.Expect(round.Carried(upstreamServiceReady)).To(BeTrue(), "not settled yet")
	s.claimed(upstreamUserReady, "placement", true)
	g.Expect(round.Carried(upstreamUserReady)).To(BeFalse())
}
