package functional

import (
	"context"
	"strings"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

var _ = Describe("The keystone.openstack.org schema", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	// atRuntime is what InputReady says of the same mistake (deploy.SpecProblems), for
	// clusters that run keystone-operator's CRDs, which lack this suite's rules; "" where
	// keystone-operator's schema refuses it too.
	DescribeTable("rejects an invalid KeystoneAPI with a message the user understands, and says the same at run time",
		func(mutate func(*keystonev1.KeystoneAPI), external bool, want string, atRuntime ...string) {
			api := keystoneAPI(ns)
			if external {
				api = externalKeystoneAPI(ns)
			}
			mutate(api)
			err := k8sClient.Create(context.Background(), api)
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring(want))
			problems := strings.Join(deploy.SpecProblems(api), "; ")
			if len(atRuntime) == 0 {
				Expect(problems).To(BeEmpty())
				return
			}
			Expect(problems).To(ContainSubstring(atRuntime[0]))
		},
		Entry("too many replicas", func(a *keystonev1.KeystoneAPI) { a.Spec.Replicas = ptr.To[int32](33) }, false,
			"spec.replicas in body should be less than or equal to 32"),
		Entry("negative replicas", func(a *keystonev1.KeystoneAPI) { a.Spec.Replicas = ptr.To[int32](-1) }, false,
			"spec.replicas in body should be greater than or equal to 0"),
		Entry("no secret", func(a *keystonev1.KeystoneAPI) { a.Spec.Secret = "" }, false,
			"spec.secret in body should be at least 1 chars long", "secret is empty"),
		Entry("too few fernet keys", func(a *keystonev1.KeystoneAPI) { a.Spec.FernetMaxActiveKeys = ptr.To[int32](2) }, false,
			"spec.fernetMaxActiveKeys in body should be greater than or equal to 3"),
		Entry("fernet rotation of zero days", func(a *keystonev1.KeystoneAPI) { a.Spec.FernetRotationDays = ptr.To[int32](0) }, false,
			"spec.fernetRotationDays in body should be greater than or equal to 1"),
		Entry("external mode without an internal URL", func(a *keystonev1.KeystoneAPI) { a.Spec.Override.Service.Internal = nil }, true,
			"externalKeystoneAPI needs both override.service.public.endpointURL and override.service.internal.endpointURL",
			"externalKeystoneAPI needs both override.service.public.endpointURL and override.service.internal.endpointURL"),
		Entry("external mode without any override", func(a *keystonev1.KeystoneAPI) { a.Spec.Override.Service = nil }, true,
			"externalKeystoneAPI needs both", "externalKeystoneAPI needs both"),
	)

	// What keystone-operator's schema accepts is accepted (a client may write it, even
	// for a moment, as openstack-operator writes "http://" before its Route has a host),
	// and InputReady reports it: as a problem (deploy.SpecProblems) or as a wait
	// (deploy.PendingEndpoints).
	DescribeTable("accepts what keystone-operator's schema accepts, and reports it at run time",
		func(mutate func(*keystonev1.KeystoneAPI), external bool, problem, pending string) {
			api := keystoneAPI(ns)
			if external {
				api = externalKeystoneAPI(ns)
			}
			mutate(api)
			Expect(k8sClient.Create(context.Background(), api)).To(Succeed())
			problems := strings.Join(deploy.SpecProblems(api), "; ")
			waits := strings.Join(deploy.PendingEndpoints(api), "; ")
			if problem == "" {
				Expect(problems).To(BeEmpty())
			} else {
				Expect(problems).To(ContainSubstring(problem))
			}
			if pending == "" {
				Expect(waits).To(BeEmpty())
			} else {
				Expect(waits).To(ContainSubstring(pending))
			}
		},
		Entry("no database instance outside external mode", func(a *keystonev1.KeystoneAPI) { a.Spec.DatabaseInstance = "" }, false,
			"databaseInstance is required unless externalKeystoneAPI is set", ""),
		Entry("an override that is not a URL", func(a *keystonev1.KeystoneAPI) {
			a.Spec.Override.Service.Public.EndpointURL = ptr.To("keystone dot example")
		}, true, "must be an absolute http or https URL", ""),
		Entry("an override with another scheme", func(a *keystonev1.KeystoneAPI) {
			a.Spec.Override.Service.Public.EndpointURL = ptr.To("ftp://keystone.example.com")
		}, true, "must be an absolute http or https URL", ""),
		Entry("openstack-operator's override before its Route has a host", func(a *keystonev1.KeystoneAPI) {
			a.Spec.Override.Service = &keystonev1.ServiceOverrides{Public: &keystonev1.EndpointOverride{EndpointURL: ptr.To("http://")}}
		}, false, "", `override.service.public.endpointURL "http://"`),
		Entry("a configuration file name with a path", func(a *keystonev1.KeystoneAPI) {
			a.Spec.DefaultConfigOverwrite = map[string]string{"../policy.yaml": "{}"}
		}, false, `defaultConfigOverwrite key "../policy.yaml" is not a file name`, ""),
	)

	DescribeTable("rejects an invalid KeystoneService with a message the user understands",
		func(mutate func(*keystonev1.KeystoneService), want string) {
			svc := keystoneService(ns)
			mutate(svc)
			err := k8sClient.Create(context.Background(), svc)
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring(want))
		},
		Entry("empty service name", func(s *keystonev1.KeystoneService) { s.Spec.ServiceName = "" },
			"spec.serviceName in body should be at least 1 chars long"),
		Entry("empty service type", func(s *keystonev1.KeystoneService) { s.Spec.ServiceType = "" },
			"spec.serviceType in body should be at least 1 chars long"),
		Entry("empty service user", func(s *keystonev1.KeystoneService) { s.Spec.ServiceUser = "" },
			"spec.serviceUser in body should be at least 1 chars long"),
		Entry("empty password selector", func(s *keystonev1.KeystoneService) { s.Spec.PasswordSelector = "" },
			"spec.passwordSelector in body should be at least 1 chars long"),
		Entry("an empty role", func(s *keystonev1.KeystoneService) { s.Spec.Roles = []string{"admin", ""} },
			"spec.roles[1] in body should be at least 1 chars long"),
	)

	DescribeTable("rejects an invalid KeystoneEndpoint with a message the user understands",
		func(mutate func(*keystonev1.KeystoneEndpoint), want string) {
			ep := keystoneEndpoint(ns)
			mutate(ep)
			err := k8sClient.Create(context.Background(), ep)
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring(want))
		},
		Entry("empty service name", func(e *keystonev1.KeystoneEndpoint) { e.Spec.ServiceName = "" },
			"spec.serviceName in body should be at least 1 chars long"),
	)

	It("accepts any KeystoneEndpoint endpoints, as keystone-operator's schema does (EndpointsReady reports them)", func() {
		for _, endpoints := range []map[string]string{
			{"private": "http://glance:9292"}, {"public": "glance:9292"}, {"public": "/v2"}, {"public": "ftp://glance"},
			{"public": "http://"}, {"public": "http://a", "internal": "http://b", "admin": "http://c", "other": "http://d"},
		} {
			ep := keystoneEndpoint(ns)
			ep.GenerateName, ep.Name = "glance-", ""
			ep.Spec.Endpoints = endpoints
			Expect(k8sClient.Create(context.Background(), ep)).To(Succeed(), "endpoints %v", endpoints)
		}
	})

	DescribeTable("rejects an invalid KeystoneApplicationCredential with a message the user understands",
		func(mutate func(*keystonev1.KeystoneApplicationCredential), want string) {
			ac := applicationCredential(ns)
			mutate(ac)
			err := k8sClient.Create(context.Background(), ac)
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring(want))
		},
		Entry("no password Secret", func(a *keystonev1.KeystoneApplicationCredential) { a.Spec.Secret = "" },
			"spec.secret in body should be at least 1 chars long"),
		Entry("no password selector", func(a *keystonev1.KeystoneApplicationCredential) { a.Spec.PasswordSelector = "" },
			"spec.passwordSelector in body should be at least 1 chars long"),
		Entry("no user", func(a *keystonev1.KeystoneApplicationCredential) { a.Spec.UserName = "" },
			"spec.userName in body should be at least 1 chars long"),
		Entry("a lifetime of one day", func(a *keystonev1.KeystoneApplicationCredential) { a.Spec.ExpirationDays = 1 },
			"spec.expirationDays in body should be greater than or equal to 2"),
		Entry("no grace period", func(a *keystonev1.KeystoneApplicationCredential) { a.Spec.GracePeriodDays = -1 },
			"spec.gracePeriodDays in body should be greater than or equal to 1"),
		Entry("a grace period as long as the lifetime", func(a *keystonev1.KeystoneApplicationCredential) {
			a.Spec.ExpirationDays, a.Spec.GracePeriodDays = 30, 30
		}, "gracePeriodDays must be smaller than expirationDays"),
		Entry("no role", func(a *keystonev1.KeystoneApplicationCredential) { a.Spec.Roles = []string{} },
			"spec.roles in body should have at least 1 items"),
		Entry("an empty role", func(a *keystonev1.KeystoneApplicationCredential) { a.Spec.Roles = []string{"service", ""} },
			"spec.roles[1] in body should be at least 1 chars long"),
		Entry("an access rule with an unknown method", func(a *keystonev1.KeystoneApplicationCredential) {
			a.Spec.AccessRules = []keystonev1.ACRule{{Service: "image", Path: "/v2/images", Method: "FETCH"}}
		}, `spec.accessRules[0].method: Unsupported value: "FETCH": supported values: "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"`),
		Entry("an access rule without a path", func(a *keystonev1.KeystoneApplicationCredential) {
			a.Spec.AccessRules = []keystonev1.ACRule{{Service: "image", Method: "GET"}}
		}, "spec.accessRules[0].path in body should be at least 1 chars long"),
		Entry("an access rule without a service", func(a *keystonev1.KeystoneApplicationCredential) {
			a.Spec.AccessRules = []keystonev1.ACRule{{Path: "/v2/images", Method: "GET"}}
		}, "spec.accessRules[0].service in body should be at least 1 chars long"),
	)

	It("applies the keystone-operator defaults to a KeystoneAPI", func() {
		Expect(k8sClient.Create(context.Background(), keystoneAPI(ns))).To(Succeed())
		api := getAPI(types.NamespacedName{Namespace: ns, Name: "keystone"})(Default)
		Expect(api.Spec.Replicas).To(HaveValue(BeEquivalentTo(1)))
		Expect(api.Spec.PasswordSelectors.Admin).To(Equal("AdminPassword"))
		Expect(api.Spec.DatabaseAccount).To(Equal("keystone"))
		Expect(api.Spec.MemcachedInstance).To(Equal("memcached"))
		Expect(api.Spec.Region).To(Equal("regionOne"))
		Expect(api.Spec.AdminProject).To(Equal("admin"))
		Expect(api.Spec.AdminUser).To(Equal("admin"))
		Expect(api.Spec.FernetRotationDays).To(HaveValue(BeEquivalentTo(1)))
		Expect(api.Spec.FernetMaxActiveKeys).To(HaveValue(BeEquivalentTo(5)))
		Expect(api.Spec.ExternalKeystoneAPI).To(BeFalse())
	})

	It("applies the defaults to a KeystoneService", func() {
		Expect(k8sClient.Create(context.Background(), keystoneService(ns))).To(Succeed())
		svc := getService(types.NamespacedName{Namespace: ns, Name: "glance"})(Default)
		Expect(svc.Spec.Enabled).To(HaveValue(BeTrue()))
		Expect(svc.Spec.Roles).To(Equal([]string{"admin", "service"}))
	})

	It("shows Ready, Reason, Message and Age in kubectl get", func() {
		Expect(k8sClient.Create(context.Background(), keystoneAPI(ns))).To(Succeed())
		Expect(k8sClient.Create(context.Background(), keystoneService(ns))).To(Succeed())
		Eventually(func(g Gomega) {
			out := kubectl("get", "keystoneapi", "-n", ns)
			lines := strings.Split(strings.TrimSpace(out), "\n")
			g.Expect(lines).To(HaveLen(2))
			g.Expect(strings.Fields(lines[0])).To(Equal([]string{"NAME", "READY", "REASON", "MESSAGE", "AGE"}))
			g.Expect(strings.Fields(lines[1])[:3]).To(Equal([]string{"keystone", "False", "DependencyNotFound"}))
			g.Expect(lines[1]).To(ContainSubstring("InputReady (1/14 ready): secret osp-secret with key AdminPassword not found"))
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			out := kubectl("get", "keystoneservice", "-n", ns)
			lines := strings.Split(strings.TrimSpace(out), "\n")
			g.Expect(strings.Fields(lines[0])).To(Equal([]string{"NAME", "SERVICEID", "READY", "REASON", "MESSAGE", "AGE"}))
			g.Expect(lines[1]).To(ContainSubstring("KeystoneAPIReady (0/6 ready)"))
		}).Should(Succeed())
	})

	It("lists both kinds in the openstack category", func() {
		Expect(k8sClient.Create(context.Background(), keystoneAPI(ns))).To(Succeed())
		Expect(kubectl("get", "openstack", "-n", ns, "-o", "name")).To(ContainSubstring("keystoneapi.keystone.openstack.org/keystone"))
	})
})

var _ = Describe("A KeystoneAPI in external mode", func() {
	It("declares only the input, endpoint and client configuration steps", func() {
		ns := newNamespace()
		Expect(k8sClient.Create(context.Background(), externalKeystoneAPI(ns))).To(Succeed())
		Eventually(func(g Gomega) {
			api := getAPI(types.NamespacedName{Namespace: ns, Name: "keystone"})(g)
			g.Expect(summary(api.Status.Conditions)).To(Equal([]condition{
				{"Ready", "False", "DependencyNotFound", "Warning"},
				{keystonev1.KeystoneAPIInputReady, "False", "DependencyNotFound", "Warning"},
				{keystonev1.KeystoneAPIEndpointReady, "Unknown", "Init", ""},
				{keystonev1.KeystoneAPIOpenStackConfigReady, "Unknown", "Init", ""},
				{keystonev1.KeystoneAPIRegistrationsReady, "True", "Ready", ""},
				{"Reconciling", "True", "DependencyNotFound", ""},
			}))
		}).Should(Succeed())
	})
})

var _ = Describe("A KeystoneService object", func() {
	It("gets its registration steps initialised in declared order", func() {
		ns := newNamespace()
		Expect(k8sClient.Create(context.Background(), keystoneService(ns))).To(Succeed())
		Eventually(func(g Gomega) {
			svc := getService(types.NamespacedName{Namespace: ns, Name: "glance"})(g)
			g.Expect(svc.Status.ObservedGeneration).To(Equal(svc.Generation))
			var types []string
			for _, c := range svc.Status.Conditions {
				types = append(types, string(c.Type))
			}
			g.Expect(types).To(Equal([]string{"Ready", "KeystoneAPIReady", "InputReady", "KeystoneServiceReady",
				"ServiceUserReady", "RolesReady", "RoleAssignmentReady", "Reconciling"}))
		}).Should(Succeed())
	})
})
