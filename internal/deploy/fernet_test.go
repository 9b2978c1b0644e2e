package deploy

import (
	"encoding/base64"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

func TestNewKeyFormat(t *testing.T) {
	g := NewWithT(t)
	k, err := NewKey()
	g.Expect(err).NotTo(HaveOccurred())
	raw, err := base64.URLEncoding.DecodeString(k)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(raw).To(HaveLen(32))
}

func TestRotate(t *testing.T) {
	g := NewWithT(t)
	keys := []string{"staged", "k1", "k2", "k3", "primary"}
	rotated, err := Rotate(keys, 5)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rotated).To(HaveLen(5))
	g.Expect(rotated[len(rotated)-1]).To(Equal("staged"), "the staged key becomes the primary")
	g.Expect(rotated[1:4]).To(Equal([]string{"k2", "k3", "primary"}), "the oldest secondary is dropped, the old primary stays")
	g.Expect(rotated[0]).NotTo(BeElementOf(keys), "a new staged key")

	grown, err := Rotate(keys, 6)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(grown[1:]).To(Equal([]string{"k1", "k2", "k3", "primary", "staged"}), "nothing dropped below max_active_keys")
}

func TestResize(t *testing.T) {
	g := NewWithT(t)
	keys := []string{"staged", "k1", "k2", "k3", "primary"}
	shrunk, err := Resize(append([]string(nil), keys...), 3)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(shrunk).To(Equal([]string{"staged", "k3", "primary"}))
	grown, err := Resize(append([]string(nil), keys...), 7)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(grown).To(HaveLen(7))
	g.Expect(grown[0]).To(Equal("staged"))
	g.Expect(grown[len(grown)-1]).To(Equal("primary"))
	g.Expect(grown[3:6]).To(Equal([]string{"k1", "k2", "k3"}))
}

func TestKeysData(t *testing.T) {
	g := NewWithT(t)
	data, err := NewKeysData(4)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(FernetKeys(data)).To(HaveLen(4))
	g.Expect(CredentialKeys(data)).To(HaveLen(2))
	g.Expect(data).To(HaveKey("FernetKeys0"))
	g.Expect(data).To(HaveKey("CredentialKeys1"))
	replaced := WithFernetKeys(data, []string{"a", "b", "c"})
	g.Expect(FernetKeys(replaced)).To(Equal([]string{"a", "b", "c"}))
	g.Expect(CredentialKeys(replaced)).To(Equal(CredentialKeys(data)))
	g.Expect(RotationDue(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), 2)).To(Equal(time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)))
}

func TestReadKeys(t *testing.T) {
	g := NewWithT(t)
	k := func() string {
		key, err := NewKey()
		g.Expect(err).NotTo(HaveOccurred())
		return key
	}
	k0, k1, k3, k4 := k(), k(), k(), k()
	// A repository with a gap: the primary is 4, as Keystone reads it.
	repo := ReadKeys(FernetKeyPrefix, map[string][]byte{"FernetKeys0": []byte(k0), "FernetKeys1": []byte(k1),
		"FernetKeys3": []byte(k3), "FernetKeys4": []byte(k4 + "\n"), "FernetKeysOld": []byte("x"), "CredentialKeys0": []byte(k0)})
	g.Expect(repo.Indices).To(Equal([]int{0, 1, 3, 4}))
	g.Expect(repo.Keys).To(Equal([]string{k0, k1, k3, k4 + "\n"}), "every key, the primary last; a trailing newline kept as written")
	g.Expect(repo.Problems).To(BeEmpty())
	g.Expect(repo.Renumbered(FernetKeyPrefix)).To(Equal([]string{"FernetKeys3 is now FernetKeys2", "FernetKeys4 is now FernetKeys3"}))
	g.Expect(repo.Oldest(FernetKeyPrefix, 0)).To(BeEmpty())
	g.Expect(repo.Oldest(FernetKeyPrefix, 1)).To(Equal([]string{"FernetKeys1"}), "the oldest secondary")
	g.Expect(repo.Oldest(FernetKeyPrefix, 3)).To(Equal([]string{"FernetKeys1", "FernetKeys3"}), "never the staged key or the primary")

	bad := ReadKeys(FernetKeyPrefix, map[string][]byte{"FernetKeys0": []byte(k0), "FernetKeys1": nil,
		"FernetKeys2": []byte("not a key!"), "FernetKeys3": []byte("c2hvcnQ="), "FernetKeys04": []byte(k0), "FernetKeys4": []byte(k1)})
	g.Expect(bad.Problems).To(Equal([]string{"FernetKeys1 is empty", "FernetKeys2 is not url-safe base64",
		"FernetKeys3 holds 5 bytes, not the 32 of a key", "FernetKeys04 and FernetKeys4 all name key 4"}))
	g.Expect(bad.Indices).To(Equal([]int{0, 1, 2, 3, 4}), "Keystone reads FernetKeys04 as key 4")

	hundred := map[string][]byte{}
	for i := range 100 {
		hundred["FernetKeys"+strconv.Itoa(i)] = []byte(k())
	}
	many := ReadKeys(FernetKeyPrefix, hundred)
	g.Expect(many.Keys).To(HaveLen(100))
	g.Expect(many.Oldest(FernetKeyPrefix, 95)).To(HaveLen(95))
}
