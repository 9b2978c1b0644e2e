package realkeystone

import (
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/tests/support/controlplane"
	"github.com/keystone-stepwise/keystone-operator/tests/support/localkeystone"
	"github.com/keystone-stepwise/keystone-operator/tests/support/testutil"
	. "github.com/onsi/gomega"
)

// TestBackendTLSServesRealKeystone renders the configuration the operator writes for a
// Galera and a Memcached with TLS (openstack-operator's default) and serves Keystone
// with it against a MariaDB that refuses clients without TLS and a memcached that speaks
// TLS only: db-sync, bootstrap, authentication and the token cache all go over TLS.
func TestBackendTLSServesRealKeystone(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ca, err := testutil.NewCA("backends")
	g.Expect(err).NotTo(HaveOccurred())
	cert, key, err := ca.Issue("127.0.0.1")
	g.Expect(err).NotTo(HaveOccurred())
	api := testKeystoneAPI()
	api.Spec.TLS.CaBundleSecretName = "combined-ca-bundle"
	stack, err := localkeystone.StartStack(ctx, t.TempDir(), api, adminPassword,
		localkeystone.WithBackendTLS(localkeystone.TLS{Cert: cert, Key: key, CA: ca.PEM}))
	controlplane.Unavailable(t, err)
	g.Expect(err).NotTo(HaveOccurred())
	defer stack.Stop()
	g.Expect(stack.Files[deploy.MyCnf]).To(ContainSubstring("ssl-ca = "))
	g.Expect(stack.Files[deploy.KeystoneConf]).To(ContainSubstring("tls_enabled = true"))

	client, token := authenticate(ctx, g, stack.Keystone.URL())
	g.Expect(validate(ctx, client, token)).To(Succeed())
	stats, err := stack.Memcached.Stats()
	g.Expect(err).NotTo(HaveOccurred())
	items, err := strconv.Atoi(stats["total_items"])
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(items).To(BeNumerically(">", 0), "Keystone cached in memcached, over TLS")

	// The controls: neither server takes a client without TLS, so the above went over it.
	mariadb := func(tls ...string) (string, error) {
		args := append([]string{"--no-defaults", "-h", "127.0.0.1", "-P", strconv.Itoa(stack.DB.Port), "-u", "keystone",
			"-p" + localkeystone.StackDatabasePassword}, tls...)
		out, err := exec.CommandContext(ctx, "/usr/bin/mariadb", append(args, "-e", "SELECT 1")...).CombinedOutput()
		return string(out), err
	}
	out, err := mariadb("--ssl", "--ssl-ca="+filepath.Join(stack.Dir, "backend-ca.crt"))
	g.Expect(err).NotTo(HaveOccurred(), "Keystone's database user, over TLS: %s", out)
	out, err = mariadb("--skip-ssl")
	// MariaDB 10.11 answers require_secure_transport with "Access denied".
	g.Expect(err).To(HaveOccurred(), "the same user without TLS is refused: %s", out)
	clear := *stack.Memcached
	clear.TLS = nil
	_, err = clear.Stats()
	g.Expect(err).To(HaveOccurred(), "memcached answers no client without TLS")
}
