package v1beta1

import (
	"testing"
)

func TestMatchName(t *testing.T) {
	for _, c := range []struct {
		pattern, name string
		want          bool
	}{
		{"*", "", true},
		{"*", "glance", true},
		{"*", "image/glance", true},
		{"glance", "glance", true},
		{"glance", "Glance", true},
		{"GLANCE", "glance", true},
		{"glance", "glance2", false},
		{"glance", "glanc", false},
		{"tenant-a-*", "tenant-a-", true},
		{"tenant-a-*", "tenant-a-glance", true},
		{"tenant-a-*", "TENANT-A-glance", true},
		{"tenant-a-*", "tenant-b-glance", false},
		{"tenant-a-*", "xtenant-a-glance", false},
		{"image/*", "image/glance", true},
		{"image/*", "image-x/glance", false},
		{"*/glance", "image/glance", true},
		{"*/glance", "image/glance-evil", false},
		{"a*b*c", "aXbYc", true},
		{"a*b*c", "aXbYcZ", false},
		{"a*b*c", "abbbc", true},
		{"**", "x", true},
		{"é*", "Éclair", true},
		{"e*", "éclair", false},
		{"", "", true},
		{"", "x", false},
	} {
		if got := MatchName(c.pattern, c.name); got != c.want {
			t.Errorf("MatchName(%q, %q) = %t, want %t", c.pattern, c.name, got, c.want)
		}
	}
}

func TestPolicyDefaults(t *testing.T) {
	p := (&KeystoneAPI{}).Policy()
	for _, role := range DefaultServiceRoles {
		if !p.AllowsRole(role) {
			t.Errorf("the default policy refuses role %s, which keystone-operator gives every service user", role)
		}
	}
	if p.AllowsRole("reader") {
		t.Error("the default policy allows role reader, which keystone-operator never asks for")
	}
	if !p.MayCreateRoles() || !p.AllowsService("Ceilometer", "ceilometer") || !p.AllowsUser("ironic-inspector") {
		t.Error("the default policy refuses what keystone-operator does")
	}
	if got := p.Setting("adoptedServiceEndpoints"); got != "spec.registrationPolicy.adoptedServiceEndpoints: none" {
		t.Errorf("Setting: %q", got)
	}
}

// TestAdoptedEndpoints: with no registrationPolicy (keystone-operator's schema), endpoints
// go under every adopted service but an identity service, as keystone-operator's go under
// any service it finds; a policy written, even empty, lists the services itself.
func TestAdoptedEndpoints(t *testing.T) {
	absent := &KeystoneAPI{}
	if !absent.AllowsAdoptedEndpoints("placement", "placement") || !absent.AllowsAdoptedEndpoints("image", "glance") {
		t.Error("no policy: endpoints refused under an adopted service, which keystone-operator takes")
	}
	if absent.AllowsAdoptedEndpoints("identity", "keystone") || absent.AllowsAdoptedEndpoints("Identity", "other") {
		t.Error("no policy: endpoints allowed under an identity service")
	}
	if got := absent.AdoptedEndpointsSetting(); got != "no spec.registrationPolicy: every service but an identity service" {
		t.Errorf("AdoptedEndpointsSetting: %q", got)
	}
	empty := &KeystoneAPI{Spec: KeystoneAPISpec{RegistrationPolicy: &RegistrationPolicy{}}}
	if empty.AllowsAdoptedEndpoints("placement", "placement") {
		t.Error("a policy written without adoptedServiceEndpoints lets endpoints go under an adopted service")
	}
	if got := empty.AdoptedEndpointsSetting(); got != "spec.registrationPolicy.adoptedServiceEndpoints: none" {
		t.Errorf("AdoptedEndpointsSetting: %q", got)
	}
	listed := &KeystoneAPI{Spec: KeystoneAPISpec{RegistrationPolicy: &RegistrationPolicy{
		AdoptedServiceEndpoints: []string{"identity/keystone"}}}}
	if !listed.AllowsAdoptedEndpoints("identity", "keystone") || listed.AllowsAdoptedEndpoints("placement", "placement") {
		t.Error("a policy's list is not what it allows")
	}
}

func TestPolicyGiven(t *testing.T) {
	no := false
	api := &KeystoneAPI{Spec: KeystoneAPISpec{RegistrationPolicy: &RegistrationPolicy{Roles: []string{"service"},
		CreateRoles: &no, Services: []string{"image/tenant-a-*"}, Users: []string{"tenant-a-*"},
		AdoptedServiceEndpoints: []string{"image/glance"}}}}
	p := api.Policy()
	switch {
	case p.AllowsRole("admin"), !p.AllowsRole("Service"):
		t.Error("roles")
	case p.MayCreateRoles():
		t.Error("createRoles")
	case p.AllowsService("image", "glance"), !p.AllowsService("image", "tenant-a-glance"), p.AllowsService("identity", "tenant-a-x"):
		t.Error("services")
	case p.AllowsUser("glance"), !p.AllowsUser("tenant-a-glance"):
		t.Error("users")
	case !api.AllowsAdoptedEndpoints("image", "glance"):
		t.Error("adoptedServiceEndpoints")
	}
	tenant := RegistrationPolicy{Services: []string{"*/tenant-a-*"}}
	switch {
	case !tenant.AllowsService("object-store", "tenant-a-files"):
		t.Error("*/tenant-a-* refuses object-store/tenant-a-files")
	case tenant.AllowsService("x/tenant-a-y", "glance"), tenant.AllowsService("x", "tenant-a-y/glance"):
		t.Error("a \"*\" of one part matches across \"/\"")
	case !(RegistrationPolicy{Services: []string{"*"}}).AllowsService("x/y", "z"):
		t.Error("\"*\" alone matches every service")
	}
	if got := p.Setting("roles"); got != "spec.registrationPolicy.roles: [service]" {
		t.Errorf("Setting: %q", got)
	}
	// Policy copies: a caller changing what it got changes nothing of the KeystoneAPI.
	p.Roles[0] = "admin"
	if api.Spec.RegistrationPolicy.Roles[0] != "service" {
		t.Error("Policy returned the spec's own slice")
	}
}
