package access

import (
	"context"
	"testing"

	"github.com/go-logr/logr/funcr"
	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
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
	// Else the record of a refusal would make the next login another one, and so on.
	api.Annotations[AdminLoginRefusedAnnotation] = "0123"
	if got := AdminSource(api, "s1/1#AdminPassword"); got != want {
		t.Errorf("the record of a refused login changes the source: %q, want %q", got, want)
	}
}

// TestAdminRefusalRecorded (docs/security.md, the admin password Secret): the admin's
// credentials name their KeystoneAPI and the refusal recorded on it; RecordAdminRefusal
// writes that record there, changing nothing else, and removes it; a KeystoneAPI gone
// meanwhile is no error.
func TestAdminRefusalRecorded(t *testing.T) {
	g := NewWithT(t)
	scheme := runtime.NewScheme()
	g.Expect(keystonev1.AddToScheme(scheme)).To(Succeed())
	api := &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "keystone", UID: "u1",
		Annotations: map[string]string{"note": "x"}}, Spec: keystonev1.KeystoneAPISpec{AdminUser: "admin", AdminProject: "admin"}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(api.DeepCopy()).Build()
	var logged []string
	log := funcr.New(func(_, args string) { logged = append(logged, args) }, funcr.Options{})
	record := RecordAdminRefusal(c, log)
	creds := AdminAt(api, "https://keystone", "pw", AdminSource(api, "s1/1#AdminPassword"), nil)
	g.Expect(creds.Holder).To(Equal(types.NamespacedName{Namespace: "ns", Name: "keystone"}))
	g.Expect(creds.Recorded).To(BeEmpty())

	ctx := context.Background()
	record(ctx, creds, identity.RefusalRecord(creds))
	got := &keystonev1.KeystoneAPI{}
	g.Expect(c.Get(ctx, creds.Holder, got)).To(Succeed())
	g.Expect(got.Annotations).To(Equal(map[string]string{"note": "x", AdminLoginRefusedAnnotation: identity.RefusalRecord(creds)}))
	again := AdminAt(got, "https://keystone", "pw", AdminSource(got, "s1/1#AdminPassword"), nil)
	g.Expect(again.Recorded).To(Equal(identity.RefusalRecord(again)), "read back, the record names the same login")

	stale := again
	stale.Recorded = "an older record"
	record(ctx, stale, "")
	g.Expect(c.Get(ctx, creds.Holder, got)).To(Succeed())
	g.Expect(got.Annotations).To(HaveKeyWithValue(AdminLoginRefusedAnnotation, identity.RefusalRecord(creds)),
		"a login that works removes only the record it was read with, not a newer one")
	logged = nil // the fake client's own error for a failed test; the API server's 422 is tested in tests/functional

	record(ctx, again, "")
	g.Expect(c.Get(ctx, creds.Holder, got)).To(Succeed())
	g.Expect(got.Annotations).To(Equal(map[string]string{"note": "x"}))

	gone := creds
	gone.Holder.Name = "gone"
	record(ctx, gone, "0123")
	g.Expect(logged).To(BeEmpty(), "a missing KeystoneAPI is no failure to log")
	failing := RecordAdminRefusal(fake.NewClientBuilder().WithScheme(runtime.NewScheme()).Build(), log)
	failing(ctx, creds, "0123")
	g.Expect(logged).To(ConsistOf(ContainSubstring("a restarted operator tries it once more")), "a failed write is logged")
}
