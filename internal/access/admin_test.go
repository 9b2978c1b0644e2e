package access

import (
	"testing"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestAdminSource: a refused login is tried again when the password's Secret or what a
// person changes of the KeystoneAPI changes, and only then.
func TestAdminSource(t *testing.T) {
	base := func() *keystonev1.KeystoneAPI {
		return &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{UID: "u1", Generation: 1,
			Labels: map[string]string{"team": "a"}, Annotations: map[string]string{"note": "x"}, Finalizers: []string{"f"}}}
	}
	want := AdminSource(base(), "s1/1#AdminPassword")
	for name, change := range map[string]func(*keystonev1.KeystoneAPI){
		"generation": func(a *keystonev1.KeystoneAPI) { a.Generation++ },
		"annotation": func(a *keystonev1.KeystoneAPI) { a.Annotations["note"] = "y" },
		"label":      func(a *keystonev1.KeystoneAPI) { a.Labels["team"] = "b" },
		"uid":        func(a *keystonev1.KeystoneAPI) { a.UID = "u2" },
	} {
		api := base()
		change(api)
		if AdminSource(api, "s1/1#AdminPassword") == want {
			t.Errorf("a change of the %s keeps the source %q", name, want)
		}
	}
	if AdminSource(base(), "s1/2#AdminPassword") == want {
		t.Errorf("a new version of the Secret keeps the source %q", want)
	}
	api := base()
	api.Finalizers = append(api.Finalizers, "g")
	api.ResourceVersion = "7"
	api.Status.ObservedGeneration = 1
	if got := AdminSource(api, "s1/1#AdminPassword"); got != want {
		t.Errorf("a finalizer or status write changes the source: %q, want %q", got, want)
	}
}
