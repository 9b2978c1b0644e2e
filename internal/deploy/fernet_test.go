package deploy

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keystone-stepwise/keystone-operator/tests/support/controlplane"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
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
	g.Expect(bad.Problems).To(Equal([]string{`FernetKeys2 is not padded: Keystone's decoder needs its last group padded with "="`,
		"FernetKeys3 decodes to 5 bytes, not the 32 of a Fernet key", "FernetKeys04 and FernetKeys4 all name key 4"}))
	g.Expect(bad.Indices).To(Equal([]int{0, 2, 3, 4}), "Keystone skips an empty key and reads FernetKeys04 as key 4")
	g.Expect(bad.Names).To(Equal([]string{"FernetKeys0", "FernetKeys2", "FernetKeys3", "FernetKeys04"}))

	hundred := map[string][]byte{}
	for i := range 100 {
		hundred["FernetKeys"+strconv.Itoa(i)] = []byte(k())
	}
	many := ReadKeys(FernetKeyPrefix, hundred)
	g.Expect(many.Keys).To(HaveLen(100))
	g.Expect(many.Oldest(FernetKeyPrefix, 95)).To(HaveLen(95))
}

// upstreamKey is a key as keystone-operator makes it (GenerateFernetKey,
// internal/keystone/fernet.go): 32 bytes of crypto/rand in standard base64.
func upstreamKey(t *testing.T) ([]byte, string) {
	t.Helper()
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		t.Fatal(err)
	}
	return raw, base64.StdEncoding.EncodeToString(raw)
}

// A key holding both "+" and "/" in standard base64 and "-" and "_" in url-safe base64:
// bytes 0xfb 0xff make "+/8" and "-_8".
var bothAlphabets = append([]byte{0xfb, 0xff}, make([]byte, 30)...)

func TestDecodeKey(t *testing.T) {
	std := base64.StdEncoding.EncodeToString(bothAlphabets)
	url := base64.URLEncoding.EncodeToString(bothAlphabets)
	cases := []struct {
		name, key string
		problem   string // "" when Keystone takes the key
	}{
		{"standard base64 (keystone-operator's)", std, ""},
		{"url-safe base64 (keystone-manage's)", url, ""},
		{"the two alphabets mixed", url[:2] + std[2:], ""},
		{"a trailing newline", std + "\n", ""},
		{"white space anywhere", " " + std[:10] + "\r\n\t" + std[10:] + " ", ""},
		{"a second pad", std + "=", ""},
		{"anything after the padding", std + "garbage!", ""},
		{"a character outside the alphabet", std[:5] + "*" + std[5:], ""},
		{"a pad where no group is open", std[:4] + "=" + std[4:], ""},
		{"no padding", strings.TrimRight(std, "="), `is not padded: Keystone's decoder needs its last group padded with "="`},
		{"url-safe without padding", base64.RawURLEncoding.EncodeToString(bothAlphabets), `is not padded: Keystone's decoder needs its last group padded with "="`},
		{"31 bytes", base64.StdEncoding.EncodeToString(bothAlphabets[:31]), "decodes to 31 bytes, not the 32 of a Fernet key"},
		{"33 bytes", base64.StdEncoding.EncodeToString(append(bothAlphabets, 1)), "decodes to 33 bytes, not the 32 of a Fernet key"},
		{"hex, not base64", strings.Repeat("ab", 32), "decodes to 48 bytes, not the 32 of a Fernet key"},
		{"one data character too many", std[:43] + "AB" + "=", "is not base64: 45 characters of data, one more than a multiple of 4"},
		{"white space only", " \n", "holds no base64 character"},
		{"not ASCII", std[:43] + "é", "holds a character that is not ASCII"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := NewWithT(t)
			raw, err := DecodeKey(c.key)
			if c.problem != "" {
				g.Expect(err).To(MatchError(c.problem))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(raw).To(Equal(bothAlphabets))
		})
	}
}

// TestDecodeKeyRandom: every key keystone-operator makes (standard base64) and every key
// keystone-manage makes (url-safe) decodes to its 32 bytes, with or without a newline.
func TestDecodeKeyRandom(t *testing.T) {
	g := NewWithT(t)
	for range 2000 {
		raw, std := upstreamKey(t)
		for _, key := range []string{std, base64.URLEncoding.EncodeToString(raw), std + "\n"} {
			got, err := DecodeKey(key)
			g.Expect(err).NotTo(HaveOccurred(), key)
			g.Expect(got).To(Equal(raw), key)
		}
	}
	own, err := NewKey()
	g.Expect(err).NotTo(HaveOccurred())
	_, err = DecodeKey(own)
	g.Expect(err).NotTo(HaveOccurred())
}

// TestDecodeKeyAgreesWithKeystone hands the same keys to the Fernet class Keystone uses
// (Debian's python3-cryptography, installed by make test with Keystone): what it takes,
// DecodeKey takes, to the same bytes; what it refuses, DecodeKey refuses.
func TestDecodeKeyAgreesWithKeystone(t *testing.T) {
	if err := exec.Command("/usr/bin/python3", "-c", "import cryptography.fernet").Run(); err != nil {
		controlplane.Unavailable(t, &controlplane.MissingError{What: "python3-cryptography (Keystone's)", Run: "make debian-deps"})
	}
	g := NewWithT(t)
	keys := []string{}
	for range 200 {
		raw, std := upstreamKey(t)
		keys = append(keys, std, base64.URLEncoding.EncodeToString(raw), base64.RawStdEncoding.EncodeToString(raw),
			std[:20]+" \n"+std[20:], std[:7]+"="+std[7:], std[:30]+"=="+std[30:], std+"=x", std[:42]+"=", std[:41]+"==")
	}
	keys = append(keys, "", "\n", "=", "====", strings.Repeat("A", 44), strings.Repeat("A", 43)+"==",
		strings.Repeat("-", 43)+"=", strings.Repeat("_", 42)+"==")
	script := `
import base64, json, sys
from cryptography import fernet
out = []
for k in json.load(sys.stdin):
    try:
        fernet.Fernet(k)
        out.append(base64.b64encode(base64.urlsafe_b64decode(k)).decode())
    except Exception:
        out.append(None)
json.dump(out, sys.stdout)
`
	in, err := json.Marshal(keys)
	g.Expect(err).NotTo(HaveOccurred())
	cmd := exec.Command("/usr/bin/python3", "-c", script)
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	g.Expect(err).NotTo(HaveOccurred())
	var python []*string
	g.Expect(json.Unmarshal(out, &python)).To(Succeed())
	g.Expect(python).To(HaveLen(len(keys)))
	for i, k := range keys {
		raw, err := DecodeKey(k)
		if python[i] == nil {
			g.Expect(err).To(HaveOccurred(), "Keystone refuses %q", k)
			continue
		}
		g.Expect(err).NotTo(HaveOccurred(), "Keystone takes %q", k)
		g.Expect(base64.StdEncoding.EncodeToString(raw)).To(Equal(*python[i]), "%q decodes to the same bytes", k)
	}
}

func TestCredentialKeyItems(t *testing.T) {
	g := NewWithT(t)
	_, k := upstreamKey(t)
	// After two credential_rotate runs Keystone's repository is 0, 2, 3 (3 primary).
	repo := ReadKeys(CredentialKeyPrefix, map[string][]byte{"CredentialKeys0": []byte(k), "CredentialKeys2": []byte(k),
		"CredentialKeys03": []byte(k), "FernetKeys1": []byte(k)})
	g.Expect(repo.Problems).To(BeEmpty())
	g.Expect(repo.items()).To(Equal([]corev1.KeyToPath{{Key: "CredentialKeys0", Path: "0"}, {Key: "CredentialKeys2", Path: "2"},
		{Key: "CredentialKeys03", Path: "3"}}), "each key mounted under the number Keystone reads it by")
}
