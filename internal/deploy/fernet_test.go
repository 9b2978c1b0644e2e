package deploy

import (
	"encoding/base64"
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
