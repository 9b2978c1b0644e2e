package keystoneservice

import (
	"testing"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/controllers/registration"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	"github.com/keystone-stepwise/keystone-operator/tests/support/testutil"
	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// verdictOf is what a table compares of a verdict (testutil.Verdict).
type verdictOf testutil.Verdict

func brief(v condition.Verdict) verdictOf { return verdictOf(testutil.Brief(v)) }

func TestVerdicts(t *testing.T) {
	spec := keystonev1.KeystoneServiceSpec{ServiceType: "image", ServiceName: "glance", ServiceUser: "glance", Secret: "osp-secret"}
	api := &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Name: "keystone"}, Spec: keystonev1.KeystoneAPISpec{AdminUser: "admin"}}
	svc := func(user string) *keystonev1.KeystoneService {
		s := spec
		s.ServiceUser = user
		return &keystonev1.KeystoneService{Spec: s}
	}
	withPassword := func(s *keystonev1.KeystoneService, key string) *keystonev1.KeystoneService {
		s.Spec.PasswordSelector = key
		return s
	}
	no := false
	tenantAPI := &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Name: "keystone"}, Spec: keystonev1.KeystoneAPISpec{
		AdminUser: "admin", RegistrationPolicy: &keystonev1.RegistrationPolicy{Roles: []string{"service"}, CreateRoles: &no,
			Services: []string{"image/tenant-a-*"}, Users: []string{"tenant-a-*"}}}}
	tenantSvc := func(name, user string) *keystonev1.KeystoneService {
		s := svc(user)
		s.Spec.ServiceName = name
		return s
	}
	withRoles := func(s *keystonev1.KeystoneService, roles ...string) *keystonev1.KeystoneService {
		s.Spec.Roles = roles
		return s
	}
	none := registration.OtherAdmins{} // no other namespace's admin in the way
	foreign := &identity.ForeignError{Kind: "service", Name: "glance (image)", Owner: "KeystoneService/other/glance/u1@c1"}
	owned := identity.Registered{ID: "s1", Ownership: identity.Owned}
	adopted := identity.Registered{ID: "s1", Ownership: identity.Adopted}
	tests := []struct {
		name string
		got  condition.Verdict
		want verdictOf
	}{
		{"input: the admin's user as a service's", inputVerdict(svc("admin"), api, none), verdictOf{false, "NotAllowed", lc.SeverityError,
			"spec.serviceUser admin is the admin user of KeystoneAPI keystone, as which the operator acts: a namespace never uses it; " +
				"nothing is written to Keystone"}},
		{"input: the admin's user under another case, as Keystone on MariaDB finds it", inputVerdict(svc("Admin"), api, none),
			verdictOf{false, "NotAllowed", lc.SeverityError, "spec.serviceUser Admin is the admin user of KeystoneAPI keystone, as " +
				"which the operator acts: a namespace never uses it; nothing is written to Keystone"}},
		{"input: a user the KeystoneAPI does not allow", inputVerdict(svc("glance"), tenantAPI, none), verdictOf{false, "NotAllowed",
			lc.SeverityError, "spec.serviceUser glance is not among the users KeystoneAPI keystone allows " +
				"(spec.registrationPolicy.users: [tenant-a-*]); nothing is written to Keystone"}},
		{"input: a service the KeystoneAPI does not allow", inputVerdict(tenantSvc("glance", "tenant-a-glance"), tenantAPI, none),
			verdictOf{false, "NotAllowed", lc.SeverityError, "spec.serviceType/spec.serviceName image/glance is not among the " +
				"services KeystoneAPI keystone allows (spec.registrationPolicy.services: [image/tenant-a-*]); nothing is written to Keystone"}},
		{"input: a role the KeystoneAPI does not allow (keystone-operator's default roles)", inputVerdict(tenantSvc("tenant-a-glance",
			"tenant-a-glance"), tenantAPI, none), verdictOf{false, "NotAllowed", lc.SeverityError, "spec.roles asks for role admin, which " +
			"KeystoneAPI keystone does not allow (spec.registrationPolicy.roles: [service]); nothing is written to Keystone"}},
		{"input: a role the default policy does not allow", inputVerdict(withRoles(svc("glance"), "service", "reader"), api, none),
			verdictOf{false, "NotAllowed", lc.SeverityError, "spec.roles asks for role reader, which KeystoneAPI keystone does not " +
				"allow (spec.registrationPolicy.roles: [admin service]); nothing is written to Keystone"}},
		{"input: allowed", inputVerdict(withRoles(tenantSvc("tenant-a-glance", "tenant-a-glance"), "service"), tenantAPI, none),
			verdictOf{true, "", "", "KeystoneAPI keystone allows user tenant-a-glance, service image/tenant-a-glance and roles [service]"}},
		{"input: allowed by default", inputVerdict(svc("glance"), api, none), verdictOf{true, "", "",
			"KeystoneAPI keystone allows user glance, service image/glance and roles [admin service]"}},
		{"input: missing roles that may not be created", registration.NotAllowedVerdict(registration.MissingRolesRefusal(tenantAPI,
			[]string{"observer"})), verdictOf{false, "NotAllowed", lc.SeverityError, "spec.roles asks for observer, which Keystone " +
			"lacks, and KeystoneAPI keystone does not let its namespace create roles (spec.registrationPolicy.createRoles: false); " +
			"nothing is written to Keystone"}},
		{"service: of a type registered under another name", serviceVerdict(spec, identity.Registered{}, &identity.TypeTakenError{
			Type: "image", Found: "image", Name: "glance-evil", ID: "s9", Owner: "KeystoneService/tenant/glance-evil/u9@c1"}), verdictOf{false,
			"InvalidInput", lc.SeverityError, "Keystone has a service of type image already: glance-evil (s9), registered by " +
				"KeystoneService/tenant/glance-evil of the cluster c1; a catalog has one service of a type: make spec.serviceName " +
				"glance-evil, or have that one removed (nothing is written; looked at again when Keystone's services of type image change)"}},
		{"service: of another type clients take for it", serviceVerdict(spec, identity.Registered{}, &identity.TypeTakenError{
			Type: "block-storage", Found: "volumev3", Name: "cinderv3", ID: "s8", Owner: "KeystoneService/openstack/cinderv3/u8@c1"}),
			verdictOf{false, "InvalidInput", lc.SeverityError, "Keystone has a service of type volumev3 (which clients take for " +
				"block-storage) already: cinderv3 (s8), registered by KeystoneService/openstack/cinderv3 of the cluster c1; a catalog has " +
				"one service of a type: have that one removed (nothing is written; looked at again when Keystone's services of type " +
				"volumev3 change)"}},
		{"service: adopted, defined otherwise: never redefined", serviceVerdict(spec, identity.Registered{}, &identity.DefinitionConflictError{
			Kind: "service", Name: "dns/designate", Have: `description "DNS", enabled true`, Want: `description "", enabled false`}),
			verdictOf{false, "InvalidInput", lc.SeverityError, `service dns/designate existed before and is not this owner's: it ` +
				`has description "DNS", enabled true, where this spec says description "", enabled false, and it is never changed ` +
				`here: make this spec's serviceDescription and enabled match it, or have the service's owner change it in Keystone ` +
				`(nothing is written)`}},
		{"user: Keystone's admin, reached by another name", userVerdict(svc("àdmin").Spec, identity.Registered{}, &identity.AdminUserError{
			Asked: "àdmin", Name: "admin"}, nil), verdictOf{false, "NotAllowed", lc.SeverityError, "spec.serviceUser: Keystone finds " +
			"user admin for the name àdmin: it is Keystone's admin, as which the operator acts; a namespace never uses it; nothing " +
			"is written to Keystone"}},
		{"user: found under another name", userVerdict(svc("glànce").Spec, identity.Registered{}, &identity.OtherNameError{
			Asked: "glànce", Name: "glance", ID: "u1"}, nil), verdictOf{false, "InvalidInput", lc.SeverityError, "spec.serviceUser: " +
			"Keystone finds user glance (u1) for the name glànce: its database compares names loosely; name the user as Keystone " +
			"has it (nothing is written)"}},
		{"user: a person's, with federated identities", userVerdict(svc("glance").Spec, identity.Registered{},
			&identity.FederatedUserError{Name: "glance"}, nil), verdictOf{false, "InvalidInput", lc.SeverityError, "spec.serviceUser: " +
			"user glance is a user with federated identities (a person's, who logs in through an identity provider), which is " +
			"never taken as a service user; choose another name (nothing is written)"}},
		{"service: another KeystoneService's", serviceVerdict(spec, identity.Registered{}, foreign), verdictOf{false, "InvalidInput",
			lc.SeverityError, "service glance (image) is registered by KeystoneService/other/glance of the cluster c1; " +
				"choose another serviceType or serviceName"}},
		{"service: ours", serviceVerdict(spec, owned, nil), verdictOf{true, "", "", "service glance (image) registered as s1"}},
		{"service: adopted", serviceVerdict(spec, adopted, nil), verdictOf{true, "", "",
			"service glance (image) registered as s1 (adopted: it existed before, and stays when this KeystoneService goes)"}},
		{"user: another namespace's KeystoneService's", userVerdict(svc("glance").Spec, identity.Registered{}, &identity.ForeignError{Kind: "user", Name: "glance",
			Owner: "KeystoneService/other/glance/u1"}, nil), verdictOf{false, "InvalidInput", lc.SeverityError,
			"user glance is registered by KeystoneService/other/glance; choose another serviceUser"}},
		{"user: ours", userVerdict(svc("glance").Spec, identity.Registered{ID: "u1", Ownership: identity.Owned}, nil, nil), verdictOf{true, "", "",
			"user glance (u1) has the password of secret osp-secret"}},
		{"user: shared with another KeystoneService of the namespace", userVerdict(svc("heat").Spec, identity.Registered{ID: "u1",
			Ownership: identity.Shared, Keeper: "KeystoneService/openstack/heat-cfn/u2@c1"}, nil, nil), verdictOf{true, "", "",
			"user heat (u1) has the password of secret osp-secret (shared with KeystoneService heat-cfn, which sets its password; " +
				"it stays while either names it)"}},
		{"user: shared, with another password", userVerdict(withPassword(svc("heat"), "HeatPassword").Spec, identity.Registered{ID: "u1",
			Ownership: identity.Shared}, nil, &identity.PasswordConflictError{User: "heat", Owner: "KeystoneService/openstack/heat-cfn/u2@c1"}),
			verdictOf{false, "PasswordConflict", lc.SeverityWarning, "user heat has a password set by KeystoneService/openstack/heat-cfn, " +
				"and it is not this one: secret osp-secret key HeatPassword holds another password; KeystoneServices sharing a user need " +
				"the same password (checked again when the secret changes or the keeper sets another password)"}},
		{"user: another region's, with another password", userVerdict(withPassword(svc("heat"), "HeatPassword").Spec,
			identity.Registered{ID: "u1", Ownership: identity.Joined}, nil, &identity.PasswordConflictError{User: "heat",
				Owner: "KeystoneService/openstack/heat/u2@c2", Region: true}),
			verdictOf{false, "PasswordConflict", lc.SeverityWarning, "user heat has a password set by KeystoneService/openstack/heat " +
				"of the cluster c2, and it is not this one: secret osp-secret key HeatPassword holds another password; the regions " +
				"sharing a user need its keeper's password, and until this one has it, it is not among the user's owners and asks " +
				"for no role (checked again when the secret changes or the keeper sets another password)"}},
		{"user: adopted, its password checked", userVerdict(svc("glance").Spec, identity.Registered{ID: "u1", Ownership: identity.Adopted},
			nil, nil), verdictOf{true, "", "", "user glance (u1) has the password of secret osp-secret (adopted: it existed before, " +
			"its password is checked, never set, and it stays when this KeystoneService goes)"}},
		{"user: adopted, with another password: never set", userVerdict(withPassword(svc("glance"), "GlancePassword").Spec, identity.Registered{ID: "u1",
			Ownership: identity.Adopted}, nil, &identity.PasswordConflictError{User: "glance"}), verdictOf{false, "PasswordConflict",
			lc.SeverityWarning, "user glance existed before and is not this owner's: its password is never set here, and it is not " +
				"this one: secret osp-secret key GlancePassword holds another password; put the user's password there, or choose " +
				"another serviceUser (checked again when the secret or this KeystoneService changes)"}},
		{"roles of a user of ours", assignmentVerdict(spec, true), verdictOf{true, "", "",
			"user glance has roles [admin service] (and no other) on project service"}},
		{"deleting while endpoints hold it", endpointsHoldVerdict("deleting", []string{"glance", "glance-admin"}), verdictOf{false,
			"Requested", lc.SeverityInfo, "deleting: waiting for KeystoneEndpoints glance, glance-admin to remove their endpoints"}},
		{"roles of an adopted user", assignmentVerdict(spec, false), verdictOf{true, "", "",
			"user glance has roles [admin service] on project service"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(brief(tt.got)).To(Equal(tt.want))
		})
	}
}

func TestRolesOf(t *testing.T) {
	svc := func(name, user string, roles ...string) keystonev1.KeystoneService {
		return keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: keystonev1.KeystoneServiceSpec{ServiceUser: user, Roles: roles}}
	}
	heat := svc("heat", "heat", "admin", "service")
	g := NewWithT(t)
	g.Expect(rolesOf(&heat, nil)).To(Equal([]string{"admin", "service"}))
	g.Expect(rolesOf(&heat, []keystonev1.KeystoneService{svc("heat-cfn", "heat", "service", "heat_stack_owner")})).To(
		Equal([]string{"admin", "heat_stack_owner", "service"}), "the union")
	g.Expect(rolesOf(&heat, []keystonev1.KeystoneService{svc("heat-cfn", "heat")})).To(Equal([]string{"admin", "service"}),
		"a spec without roles has the default ones")
	g.Expect(rolesOf(&heat, []keystonev1.KeystoneService{svc("old", "heat2", "reader")})).To(Equal([]string{"admin", "service"}),
		"one moving to another user (still recorded under this one) keeps none of its roles here")
}

func TestUsersNamed(t *testing.T) {
	svc := &keystonev1.KeystoneService{Spec: keystonev1.KeystoneServiceSpec{ServiceUser: "heat"}}
	g := NewWithT(t)
	g.Expect(usersNamed(svc)).To(Equal([]string{"heat"}))
	svc.Annotations = map[string]string{UserAnnotation: "heat-old"}
	g.Expect(usersNamed(svc)).To(Equal([]string{"heat", "heat-old"}))
	svc.Annotations[UserAnnotation] = "heat"
	g.Expect(usersNamed(svc)).To(Equal([]string{"heat"}))
}
