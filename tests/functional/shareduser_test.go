package functional

import (
	"fmt"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/tests/support/fakekeystone"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// heat-operator's two KeystoneServices, as its HeatAPI and HeatCfnAPI controllers build
// them: one serviceUser (heat) and one password for both.
var _ = Describe("A service user shared by KeystoneServices of one namespace", func() {
	var (
		ns string
		ks *fakekeystone.Server
	)
	BeforeEach(func() {
		ns = newNamespace()
		ks = readyAtFakeKeystone(ns, map[string]string{"HeatPassword": "heat-1"})
	})
	heatService := func(name, serviceType, user string, roles ...string) *keystonev1.KeystoneService {
		svc := keystoneService(ns)
		svc.Name, svc.Spec.ServiceName, svc.Spec.ServiceType = name, name, serviceType
		svc.Spec.ServiceUser, svc.Spec.PasswordSelector, svc.Spec.Roles = user, "HeatPassword", roles
		return svc
	}
	keyOf := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: ns, Name: name} }
	// userRolesOf returns the roles of the user named user on the service project; nil
	// when there is no such user.
	userRolesOf := func(user string) []string {
		users := ks.List(fakekeystone.Users, map[string]any{"name": user})
		if len(users) == 0 {
			return nil
		}
		Expect(users).To(HaveLen(1), "one user %s", user)
		project := ks.List(fakekeystone.Projects, map[string]any{"name": "service"})[0]["id"].(string)
		out := []string{}
		for _, r := range ks.List(fakekeystone.Roles, nil) {
			if ks.Assigned(project, users[0]["id"].(string), r["id"].(string)) {
				out = append(out, r["name"].(string))
			}
		}
		return out
	}
	gone := func(name string) func() bool {
		return func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, keyOf(name), &keystonev1.KeystoneService{}))
		}
	}

	It("registers both when created at once, 20 times, and the user goes with the last of them", func() {
		for i := range 20 {
			user := fmt.Sprintf("heat-%d", i)
			orchestration := heatService(fmt.Sprintf("heat-%d", i), fmt.Sprintf("orchestration-%d", i), user)
			cloudformation := heatService(fmt.Sprintf("heat-cfn-%d", i), fmt.Sprintf("cloudformation-%d", i), user)
			Expect(k8sClient.Create(ctx, orchestration)).To(Succeed())
			Expect(k8sClient.Create(ctx, cloudformation)).To(Succeed())
			for _, svc := range []*keystonev1.KeystoneService{orchestration, cloudformation} {
				expectServiceConditions(client.ObjectKeyFromObject(svc), condition{"Ready", "True", "Ready", ""})
			}
			Expect(ks.List(fakekeystone.Users, map[string]any{"name": user})).To(HaveLen(1), "round %d: one user", i)
			Expect(userRolesOf(user)).To(ConsistOf("admin", "service"), "round %d", i)
			Expect(canAuthenticate(ks.URL, user, "heat-1")).To(BeTrue(), "round %d", i)
			Expect(k8sClient.Delete(ctx, orchestration)).To(Succeed())
			Expect(k8sClient.Delete(ctx, cloudformation)).To(Succeed())
			Eventually(gone(orchestration.Name)).Should(BeTrue())
			Eventually(gone(cloudformation.Name)).Should(BeTrue())
			Expect(ks.List(fakekeystone.Users, map[string]any{"name": user})).To(BeEmpty(), "round %d: deleted together, the user goes", i)
		}
	})

	It("never hands the user to a KeystoneService whose deletion has gone by meanwhile", func() {
		heat := heatService("heat", "orchestration", "heat")
		Expect(k8sClient.Create(ctx, heat)).To(Succeed())
		expectServiceConditions(keyOf("heat"), condition{"Ready", "True", "Ready", ""})
		cfn := heatService("heat-cfn", "cloudformation", "heat")
		Expect(k8sClient.Create(ctx, cfn)).To(Succeed())
		expectServiceConditions(keyOf("heat-cfn"), condition{"Ready", "True", "Ready", ""})

		By("holding the keeper's hand-over to heat-cfn in Keystone while heat-cfn is deleted")
		reached, release := ks.HoldNext("PATCH", "/v3/users/")
		DeferCleanup(release)
		Expect(k8sClient.Delete(ctx, getService(keyOf("heat"))(Default))).To(Succeed())
		Eventually(reached).Should(BeClosed(), "the keeper hands the user over")
		Expect(k8sClient.Delete(ctx, getService(keyOf("heat-cfn"))(Default))).To(Succeed())
		// Up to 3s for heat-cfn's deletion to finish, as it would were it not to wait for
		// the hand-over (then the user is marked as the gone heat-cfn's, and left).
		for end := time.Now().Add(3 * time.Second); time.Now().Before(end) && !gone("heat-cfn")(); {
			time.Sleep(100 * time.Millisecond)
		}
		release()
		Eventually(gone("heat")).Should(BeTrue())
		Eventually(gone("heat-cfn")).Should(BeTrue())
		Expect(ks.List(fakekeystone.Users, map[string]any{"name": "heat"})).To(BeEmpty(), "the user goes with the last of them")
	})

	It("keeps the user for the one that stays, hands it over, and revokes only the roles nobody asks for", func() {
		allowRoles(ns, "heat_stack_owner")
		heat := heatService("heat", "orchestration", "heat", "admin", "service")
		Expect(k8sClient.Create(ctx, heat)).To(Succeed())
		expectServiceConditions(keyOf("heat"), condition{"Ready", "True", "Ready", ""})
		cfn := heatService("heat-cfn", "cloudformation", "heat", "service", "heat_stack_owner")
		Expect(k8sClient.Create(ctx, cfn)).To(Succeed())
		expectServiceConditions(keyOf("heat-cfn"), condition{"Ready", "True", "Ready", ""})
		Expect(getService(keyOf("heat-cfn"))(Default).Status.Conditions.Get("ServiceUserReady").Message).To(
			ContainSubstring("shared with KeystoneService heat, which sets its password"))
		Eventually(func() []string { return userRolesOf("heat") }).Should(ConsistOf("admin", "service", "heat_stack_owner"), "the union")
		userID := ks.List(fakekeystone.Users, map[string]any{"name": "heat"})[0]["id"]

		By("deleting the keeper: the user stays, marked as the other's, with the other's roles alone")
		Expect(k8sClient.Delete(ctx, getService(keyOf("heat"))(Default))).To(Succeed())
		Eventually(gone("heat")).Should(BeTrue())
		Expect(ks.List(fakekeystone.Services, map[string]any{"type": "orchestration"})).To(BeEmpty(), "its service goes")
		users := ks.List(fakekeystone.Users, map[string]any{"name": "heat"})
		Expect(users).To(HaveLen(1))
		Expect(users[0]["id"]).To(Equal(userID), "the same user")
		Expect(users[0]).To(HaveKeyWithValue(identity.OwnerAttribute,
			identity.OwnerMark("KeystoneService", getService(keyOf("heat-cfn"))(Default), clusterID())))
		Expect(canAuthenticate(ks.URL, "heat", "heat-1")).To(BeTrue())
		Eventually(func() []string { return userRolesOf("heat") }).Should(ConsistOf("service", "heat_stack_owner"))
		expectServiceConditions(keyOf("heat-cfn"), condition{"Ready", "True", "Ready", ""})
		Eventually(func() string {
			return getService(keyOf("heat-cfn"))(Default).Status.Conditions.Get("ServiceUserReady").Message
		}).ShouldNot(ContainSubstring("shared"), "it keeps the user now")

		By("deleting the last one: the user goes")
		Expect(k8sClient.Delete(ctx, getService(keyOf("heat-cfn"))(Default))).To(Succeed())
		Eventually(gone("heat-cfn")).Should(BeTrue())
		Expect(ks.List(fakekeystone.Users, map[string]any{"name": "heat"})).To(BeEmpty())
	})

	It("removes the user when only their external KeystoneAPI is deleted: both leave Keystone, nobody stays to keep it", func() {
		Expect(k8sClient.Create(ctx, heatService("heat", "orchestration", "heat", "admin", "service"))).To(Succeed())
		expectServiceConditions(keyOf("heat"), condition{"Ready", "True", "Ready", ""})
		Expect(k8sClient.Create(ctx, heatService("heat-cfn", "cloudformation", "heat", "service"))).To(Succeed())
		expectServiceConditions(keyOf("heat-cfn"), condition{"Ready", "True", "Ready", ""})
		apiKey := types.NamespacedName{Namespace: ns, Name: "keystone"}
		Expect(k8sClient.Delete(ctx, getAPI(apiKey)(Default))).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, apiKey, &keystonev1.KeystoneAPI{})) }).Should(BeTrue())
		Expect(ks.List(fakekeystone.Services, map[string]any{"type": "orchestration"})).To(BeEmpty())
		Expect(ks.List(fakekeystone.Services, map[string]any{"type": "cloudformation"})).To(BeEmpty())
		Expect(ks.List(fakekeystone.Users, map[string]any{"name": "heat"})).To(BeEmpty(), "the shared user goes too")
		Expect(canAuthenticate(ks.URL, "heat", "heat-1")).To(BeFalse())
	})

	It("reports a password that disagrees, naming the keeper, never sets it, and goes on once the Secrets agree", func() {
		setSecretKey(ns, "osp-secret", "HeatCfnPassword", "heat-other")
		Expect(k8sClient.Create(ctx, heatService("heat", "orchestration", "heat"))).To(Succeed())
		expectServiceConditions(keyOf("heat"), condition{"Ready", "True", "Ready", ""})
		cfn := heatService("heat-cfn", "cloudformation", "heat")
		cfn.Spec.PasswordSelector = "HeatCfnPassword"
		Expect(k8sClient.Create(ctx, cfn)).To(Succeed())
		expectServiceConditions(keyOf("heat-cfn"), condition{"Ready", "False", "PasswordConflict", "Warning"},
			condition{"ServiceUserReady", "False", "PasswordConflict", "Warning"})
		Expect(getService(keyOf("heat-cfn"))(Default).Status.Conditions.Get("ServiceUserReady").Message).To(Equal(
			"user heat has a password set by KeystoneService/" + ns + "/heat, and it is not this one: secret osp-secret key " +
				"HeatCfnPassword holds another password; KeystoneServices sharing a user need the same password (checked again when " +
				"the secret changes or the keeper sets another password)"))
		Expect(canAuthenticate(ks.URL, "heat", "heat-1")).To(BeTrue(), "the keeper's password stays")
		Eventually(func() []string { return eventReasons(ns, "heat-cfn") }).Should(ContainElement("PasswordConflict"))

		By("the Secrets agree")
		setSecretKey(ns, "osp-secret", "HeatCfnPassword", "heat-1")
		expectServiceConditions(keyOf("heat-cfn"), condition{"Ready", "True", "Ready", ""})
		Expect(canAuthenticate(ks.URL, "heat", "heat-1")).To(BeTrue())
	})

	It("still refuses a user another namespace's KeystoneService registered", func() {
		Expect(k8sClient.Create(ctx, heatService("heat", "orchestration", "heat"))).To(Succeed())
		expectServiceConditions(keyOf("heat"), condition{"Ready", "True", "Ready", ""})
		other := newNamespace()
		api := externalKeystoneAPI(other)
		api.Spec.Override.Service.Internal.EndpointURL = ptr.To(ks.URL)
		Expect(k8sClient.Create(ctx, api)).To(Succeed())
		createSecret(other, "osp-secret", map[string]string{"AdminPassword": "secret-admin", "HeatPassword": "heat-1"})
		intruder := heatService("heat-cfn", "cloudformation", "heat")
		intruder.Namespace = other
		Expect(k8sClient.Create(ctx, intruder)).To(Succeed())
		expectServiceConditions(client.ObjectKeyFromObject(intruder), condition{"ServiceUserReady", "False", "InvalidInput", "Error"},
			condition{"Stalled", "True", "InvalidInput", ""})
		scrapeSeries() // a stalled KeystoneService, for the alerts (monitoring_test.go)
		Expect(k8sClient.Delete(ctx, intruder)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(intruder), &keystonev1.KeystoneService{}))
		}).Should(BeTrue())
		Expect(ks.List(fakekeystone.Users, map[string]any{"name": "heat"})).To(HaveLen(1), "its deletion leaves the user")
		Expect(canAuthenticate(ks.URL, "heat", "heat-1")).To(BeTrue())
	})
})
