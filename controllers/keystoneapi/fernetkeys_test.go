package keystoneapi

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
)

func TestKeysVerdict(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	due := now.Add(24 * time.Hour)
	found := func(mutate func(*keysFound)) keysFound {
		k := keysFound{secret: "keystone", credentialKeys: 2, fernetKeys: 5, sched: fernetSchedule{due: due}, now: now}
		if mutate != nil {
			mutate(&k)
		}
		return k
	}
	tests := []struct {
		name string
		k    keysFound
		want verdictOf
	}{
		{"made this round", found(func(k *keysFound) { k.created = "created in" }), verdictOf{false, "FernetCreated", lc.SeverityInfo,
			"fernet and credential keys created in secret keystone"}},
		{"no credential key: never made up", found(func(k *keysFound) { k.credentialKeys = 0 }), verdictOf{false,
			"InvalidInput", lc.SeverityError, "secret keystone holds no credential key (CredentialKeys0, CredentialKeys1, ...), " +
				"without which Keystone encrypts credentials with its null key: add the keys of the repository " +
				"Keystone's credentials were encrypted with"}},
		{"one credential key: Keystone's repository may hold one", found(func(k *keysFound) { k.credentialKeys = 1 }),
			verdictOf{true, "", "", "5 fernet keys in secret keystone, next rotation at 2026-11-26T12:00:00Z"}},
		{"observed while an earlier step waits", found(func(k *keysFound) { k.waiting = "(updated once DBReady is True)" }),
			verdictOf{true, "", "", "5 fernet keys in secret keystone, next rotation at 2026-11-26T12:00:00Z (updated once DBReady is True)"}},
		{"an unreadable rotation time", found(func(k *keysFound) { k.sched.malformed, k.sched.raw = true, "yesterday" }),
			verdictOf{false, "InvalidAnnotation", lc.SeverityWarning, `annotation keystone.openstack.org/rotatedat="yesterday" ` +
				"of secret keystone is not an RFC 3339 time (such as 2026-11-25T12:00:00Z): the keys count as rotated now, " +
				"as keystone-operator counts them, and the next rotation is at 2026-11-26T12:00:00Z"}},
		{"ready", found(nil), verdictOf{true, "", "", "5 fernet keys in secret keystone, next rotation at 2026-11-26T12:00:00Z"}},
		{"keys that are no keys: nothing rewritten", found(func(k *keysFound) {
			k.problems = []string{"FernetKeys1 holds no base64 character", "FernetKeys2 decodes to 31 bytes, not the 32 of a Fernet key"}
		}), verdictOf{false, "InvalidInput", lc.SeverityError, "secret keystone cannot be used as it is, and nothing in it " +
			"was rewritten: FernetKeys1 holds no base64 character; FernetKeys2 decodes to 31 bytes, not the 32 of a Fernet key"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(brief(keysVerdict(tt.k))).To(Equal(tt.want))
		})
	}
}

func TestDroppedCount(t *testing.T) {
	g := NewWithT(t)
	g.Expect(droppedCount(5, 5, false)).To(Equal(0))
	g.Expect(droppedCount(5, 5, true)).To(Equal(1), "a rotation adds the new staged key and drops the oldest secondary")
	g.Expect(droppedCount(100, 5, false)).To(Equal(95))
	g.Expect(droppedCount(3, 5, false)).To(Equal(0), "too few keys are padded, none dropped")
	g.Expect(droppedCount(3, 1, false)).To(Equal(1), "the staged key and the primary always stay")
}
