package realkeystone

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/tests/support/controlplane"
	"github.com/keystone-stepwise/keystone-operator/tests/support/localkeystone"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

const adminPassword = "admin-Pa55:word"

// testKeystoneAPI is the KeystoneAPI whose configuration the tests render.
func testKeystoneAPI() *keystonev1.KeystoneAPI {
	return &keystonev1.KeystoneAPI{
		ObjectMeta: metav1.ObjectMeta{Name: "keystone", Namespace: "openstack"},
		Spec: keystonev1.KeystoneAPISpec{
			ContainerImage: "keystone", Secret: "osp-secret", DatabaseInstance: "openstack", DatabaseAccount: "keystone",
			MemcachedInstance: "memcached", Region: "regionTest", AdminProject: "admin", AdminUser: "admin",
			PasswordSelectors: keystonev1.PasswordSelector{Admin: "AdminPassword"}, FernetMaxActiveKeys: ptr.To[int32](5),
			EnableSecureRBAC: true,
		},
	}
}

// TestRenderedConfigServesRealKeystone renders the configuration of a KeystoneAPI,
// points it at a real MariaDB and memcached, runs the operator's db-sync and bootstrap
// commands with Debian's keystone-manage, serves Keystone with the fernet keys the
// operator generated, and authenticates as the admin, before and after a rotation.
func TestRenderedConfigServesRealKeystone(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	api := testKeystoneAPI()
	stack, err := localkeystone.StartStack(ctx, t.TempDir(), api, adminPassword)
	controlplane.Unavailable(t, err)
	g.Expect(err).NotTo(HaveOccurred())
	defer stack.Stop()
	url := stack.Keystone.URL()
	g.Expect(stack.Files[deploy.KeystoneConf]).To(ContainSubstring("backend = " + deploy.CacheBackend))
	g.Expect(stack.Files[deploy.KeystoneConf]).NotTo(ContainSubstring(localkeystone.StackDatabasePassword))

	client, token := authenticate(ctx, g, url)
	g.Expect(validate(ctx, client, token)).To(Succeed())
	fernet := stack.FernetKeys
	g.Expect(signedBy(token, fernet[len(fernet)-1])).To(BeTrue(), "Keystone signs with the operator's primary key (the highest number)")
	g.Expect(signedBy(token, fernet[0])).To(BeFalse(), "the staged key does not sign")

	catalog, err := tokens.Get(ctx, client, token).ExtractServiceCatalog()
	g.Expect(err).NotTo(HaveOccurred())
	var identity []string
	for _, e := range catalog.Entries {
		if e.Type == "identity" {
			for _, ep := range e.Endpoints {
				identity = append(identity, ep.Interface+" "+ep.RegionID+" "+ep.URL)
			}
		}
	}
	g.Expect(identity).To(ConsistOf("public regionTest "+url, "internal regionTest "+url),
		"bootstrap registered Keystone in the spec's region at apiEndpoints, and no admin endpoint (as keystone-operator)")

	t.Log("rotating the fernet keys as the operator does")
	rotated, err := deploy.Rotate(fernet, 5)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(localkeystone.WriteKeyRepository(stack.FernetDir, rotated)).To(Succeed())
	g.Expect(validate(ctx, client, token)).To(Succeed(), "a token issued before the rotation still validates")
	_, newToken := authenticate(ctx, g, url)
	g.Expect(validate(ctx, client, newToken)).To(Succeed())
	g.Expect(signedBy(newToken, fernet[0])).To(BeTrue(), "after a rotation the former staged key signs")
}

// signedBy tells whether a fernet token's HMAC verifies with key (Keystone strips the
// base64 padding; the first half of a fernet key signs).
func signedBy(token, key string) bool {
	raw, err := base64.URLEncoding.DecodeString(token + strings.Repeat("=", (4-len(token)%4)%4))
	if err != nil || len(raw) < 1+8+16+32 || raw[0] != 0x80 {
		return false
	}
	k, err := base64.URLEncoding.DecodeString(key)
	if err != nil || len(k) != 32 {
		return false
	}
	mac := hmac.New(sha256.New, k[:16])
	mac.Write(raw[:len(raw)-32])
	return hmac.Equal(mac.Sum(nil), raw[len(raw)-32:])
}

func authenticate(ctx context.Context, g Gomega, url string) (*gophercloud.ServiceClient, string) {
	provider, err := openstack.AuthenticatedClient(ctx, gophercloud.AuthOptions{
		IdentityEndpoint: url + "/v3/", Username: "admin", Password: adminPassword, DomainName: "Default",
		Scope: &gophercloud.AuthScope{ProjectName: "admin", DomainName: "Default"},
	})
	g.Expect(err).NotTo(HaveOccurred())
	client, err := openstack.NewIdentityV3(provider, gophercloud.EndpointOpts{})
	g.Expect(err).NotTo(HaveOccurred())
	client.Endpoint = url + "/v3/"
	return client, provider.Token()
}

func validate(ctx context.Context, client *gophercloud.ServiceClient, token string) error {
	_, err := tokens.Get(ctx, client, token).Extract()
	return err
}
