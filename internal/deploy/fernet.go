package deploy

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Secret keys of the fernet and credential keys; the number is the file name in
// Keystone's key repository (0 is the staged key, the highest the primary).
const (
	FernetKeyPrefix     = "FernetKeys"
	CredentialKeyPrefix = "CredentialKeys"
	// NewCredentialKeys is how many credential keys a new repository gets: the staged
	// key and the primary, as keystone-manage credential_setup makes it. An existing
	// repository keeps what it has (Keystone keeps up to three after a
	// credential_rotate: keystone/credential/providers/fernet/core.py, MAX_ACTIVE_KEYS).
	NewCredentialKeys = 2
)

// NewKey returns a key in Keystone's format: 32 random bytes, url-safe base64.
func NewKey() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("reading random bytes: %w", err)
	}
	return base64.URLEncoding.EncodeToString(b), nil
}

// newKeys returns n new keys.
func newKeys(n int) ([]string, error) {
	keys := make([]string, n)
	for i := range keys {
		k, err := NewKey()
		if err != nil {
			return nil, err
		}
		keys[i] = k
	}
	return keys, nil
}

// NewKeysData returns the data of a new keys Secret: maxActive fernet keys and the
// credential keys.
func NewKeysData(maxActive int) (map[string][]byte, error) {
	fernet, err := newKeys(maxActive)
	if err != nil {
		return nil, err
	}
	credential, err := newKeys(NewCredentialKeys)
	if err != nil {
		return nil, err
	}
	data := keysToData(FernetKeyPrefix, fernet)
	for k, v := range keysToData(CredentialKeyPrefix, credential) {
		data[k] = v
	}
	return data, nil
}

// FernetKeys reads the fernet keys of a Secret's data in repository order.
func FernetKeys(data map[string][]byte) []string {
	return keysFromData(FernetKeyPrefix, data)
}

// CredentialKeys reads the credential keys of a Secret's data in repository order.
func CredentialKeys(data map[string][]byte) []string {
	return keysFromData(CredentialKeyPrefix, data)
}

// Rotate rotates fernet keys the way `keystone-manage fernet_rotate` does: the
// staged key (0) becomes the primary (the highest number), a new staged key takes
// its place, and the oldest secondary keys are dropped to keep maxActive keys.
func Rotate(keys []string, maxActive int) ([]string, error) {
	staged, err := NewKey()
	if err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return Resize([]string{staged}, maxActive)
	}
	rotated := append([]string{staged}, keys[1:]...)
	rotated = append(rotated, keys[0])
	return Resize(rotated, maxActive)
}

// Resize brings keys to maxActive keys: it drops the oldest secondary keys, or adds
// new ones as the oldest secondaries, never touching the staged and primary keys.
func Resize(keys []string, maxActive int) ([]string, error) {
	for len(keys) > maxActive && len(keys) > 2 {
		keys = append(keys[:1:1], keys[2:]...)
	}
	for len(keys) < maxActive {
		k, err := NewKey()
		if err != nil {
			return nil, err
		}
		keys = append(keys[:1:1], append([]string{k}, keys[1:]...)...)
	}
	return keys, nil
}

// WithFernetKeys returns data with its fernet keys replaced by keys.
func WithFernetKeys(data map[string][]byte, keys []string) map[string][]byte {
	out := map[string][]byte{}
	for k, v := range data {
		if !strings.HasPrefix(k, FernetKeyPrefix) {
			out[k] = v
		}
	}
	for k, v := range keysToData(FernetKeyPrefix, keys) {
		out[k] = v
	}
	return out
}

// RotationDue tells when the keys rotated at rotatedAt rotate next.
func RotationDue(rotatedAt time.Time, days int32) time.Time {
	return rotatedAt.Add(time.Duration(days) * 24 * time.Hour)
}

func keysToData(prefix string, keys []string) map[string][]byte {
	data := make(map[string][]byte, len(keys))
	for i, k := range keys {
		data[prefix+strconv.Itoa(i)] = []byte(k)
	}
	return data
}

func keysFromData(prefix string, data map[string][]byte) []string {
	var keys []string
	for i := 0; ; i++ {
		v, ok := data[prefix+strconv.Itoa(i)]
		if !ok {
			return keys
		}
		keys = append(keys, string(v))
	}
}

// KeyRepository is a key repository as a Secret holds it: its keys by index, read as
// Keystone reads a repository directory (every index, gaps allowed; names that are no
// number ignored, and so are empty keys, which Keystone skips with a warning).
type KeyRepository struct {
	// Indices are the repository's indices, ascending; Names the Secret key and Keys the
	// key of each.
	Indices []int
	Names   []string
	Keys    []string
	// Problems say why a key cannot be used ("FernetKeys3 decodes to 31 bytes ..."),
	// each naming the key; none when Keystone takes them all.
	Problems []string
}

// ReadKeys reads the keys named prefix<index> of a Secret's data as Keystone reads the
// files of a key repository (keystone/common/fernet_utils.py, _get_key_files): the
// index is the name's number, an empty key is skipped, and every other key must be one
// cryptography's Fernet takes (DecodeKey).
func ReadKeys(prefix string, data map[string][]byte) KeyRepository {
	var repo KeyRepository
	names := map[int][]string{}
	for name, value := range data {
		suffix, ok := strings.CutPrefix(name, prefix)
		if !ok || len(value) == 0 {
			continue
		}
		// Keystone reads a file name as Python's int() does: "04" is key 4.
		i, err := strconv.Atoi(suffix)
		if err != nil || i < 0 || strings.HasPrefix(suffix, "+") {
			continue
		}
		if names[i] == nil {
			repo.Indices = append(repo.Indices, i)
		}
		names[i] = append(names[i], name)
	}
	sort.Ints(repo.Indices)
	for _, i := range repo.Indices {
		if len(names[i]) > 1 {
			sort.Strings(names[i])
			repo.Problems = append(repo.Problems, fmt.Sprintf("%s all name key %d", strings.Join(names[i], " and "), i))
		}
		name := names[i][0]
		key := string(data[name])
		repo.Names, repo.Keys = append(repo.Names, name), append(repo.Keys, key)
		if _, err := DecodeKey(key); err != nil {
			repo.Problems = append(repo.Problems, name+" "+err.Error())
		}
	}
	return repo
}

// DecodeKey decodes a Fernet key as Keystone does: it hands the key file's text to
// cryptography's Fernet (python3-cryptography 38, fernet.py), which decodes it with
// Python's base64.urlsafe_b64decode (maps "-" and "_" to "+" and "/", then
// binascii.a2b_base64 in its default, non-strict mode) and needs 32 bytes. So both
// base64 alphabets are keys (keystone-manage writes url-safe ones, keystone-operator
// standard ones), characters outside the alphabet (white space, a newline) are skipped
// wherever they are, and input after the padding is ignored; a key whose last group is
// incomplete and not padded is refused ("Incorrect padding"), and so is any byte that is
// not ASCII. The error says why, in words that name no byte of the key.
func DecodeKey(key string) ([]byte, error) {
	raw, err := pythonB64Decode(key)
	if err != nil {
		return nil, err
	}
	if len(raw) != 32 {
		return nil, fmt.Errorf("decodes to %d bytes, not the 32 of a Fernet key", len(raw))
	}
	return raw, nil
}

// pythonB64Decode is Python's base64.urlsafe_b64decode: binascii.a2b_base64 without
// strict mode (CPython's Modules/binascii.c) after mapping "-" to "+" and "_" to "/".
func pythonB64Decode(s string) ([]byte, error) {
	var q quad
	out := make([]byte, 0, len(s)*3/4)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			return nil, errors.New("holds a character that is not ASCII")
		}
		if c == '=' {
			if q.pad() {
				return out, nil
			}
			continue
		}
		if v := b64Values[c]; v != invalidB64 {
			out = q.add(out, v)
		}
		// Characters outside the alphabet (white space) are skipped.
	}
	return out, q.end()
}

// invalidB64 marks the bytes outside the base64 alphabets in b64Values.
const invalidB64 = 0xff

// b64Values maps each ASCII byte to its value in base64, both alphabets at once ("+"
// and "-" are 62, "/" and "_" 63), and every other byte to invalidB64.
var b64Values = func() [128]byte {
	var t [128]byte
	for i := range t {
		t[i] = invalidB64
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for i := range len(alphabet) {
		t[alphabet[i]] = byte(i)
	}
	t['-'], t['_'] = 62, 63
	return t
}()

// quad is the state of a2b_base64 between characters: the position in the current
// group of four, the bits left over, the pads seen since the last data character, and
// how many data characters there were.
type quad struct {
	pos, pads, data int
	left            byte
}

// add takes a data character of value v, appending the bytes it completes to out.
func (q *quad) add(out []byte, v byte) []byte {
	q.pads = 0
	q.data++
	switch q.pos {
	case 0:
		q.left = v
	case 1:
		out = append(out, q.left<<2|v>>4)
		q.left = v & 0x0f
	case 2:
		out = append(out, q.left<<4|v>>2)
		q.left = v & 0x03
	case 3:
		out = append(out, q.left<<6|v)
	}
	q.pos = (q.pos + 1) % 4
	return out
}

// pad takes a "=": it ends the input once it completes a group of at least two
// characters; before that it is skipped.
func (q *quad) pad() bool {
	if q.pos < 2 {
		return false
	}
	q.pads++
	return q.pos+q.pads >= 4
}

// end says whether the input ended on a whole group, as a2b_base64 does.
func (q *quad) end() error {
	switch {
	case q.data == 0:
		return errors.New("holds no base64 character")
	case q.pos == 1:
		return fmt.Errorf("is not base64: %d characters of data, one more than a multiple of 4", q.data)
	case q.pos != 0:
		return errors.New("is not padded: Keystone's decoder needs its last group padded with \"=\"")
	}
	return nil
}

// Renumbered describes what writing the repository's keys densely (0, 1, 2, ...)
// changes: each index that becomes another ("FernetKeys3 is now FernetKeys2"), in
// order; none for a repository without gaps. The keys keep their order: the staged key
// stays 0 and the primary the highest, and every token and credential still validates.
func (r KeyRepository) Renumbered(prefix string) []string {
	var out []string
	for pos, i := range r.Indices {
		if pos != i {
			out = append(out, fmt.Sprintf("%s%d is now %s%d", prefix, i, prefix, pos))
		}
	}
	return out
}

// Oldest names the n oldest secondary keys (the lowest indices after the staged key),
// which Resize drops first, in order; never the staged key or the primary.
func (r KeyRepository) Oldest(prefix string, n int) []string {
	var out []string
	for pos := 1; pos < len(r.Indices)-1 && len(out) < n; pos++ {
		out = append(out, prefix+strconv.Itoa(r.Indices[pos]))
	}
	return out
}
