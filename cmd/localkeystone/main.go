// Command localkeystone runs a real Keystone on 127.0.0.1 (Debian's keystone, MariaDB
// and memcached, deployed with the operator's own configuration, keys and commands)
// until it is interrupted; for `make demo` and the kuttl scenarios. It writes the URL
// to -url-file once Keystone answers.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/tests/support/localkeystone"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "localkeystone:", err)
		os.Exit(1)
	}
}

func run() error {
	password := flag.String("admin-password", "", "password of the admin user (required)")
	urlFile := flag.String("url-file", "", "file to write Keystone's URL to when it is ready")
	dir := flag.String("dir", "", "directory for data and logs (a new temporary one when empty)")
	flag.Parse()
	if *password == "" {
		return fmt.Errorf("-admin-password is required")
	}
	if *dir == "" {
		d, err := os.MkdirTemp("", "localkeystone-")
		if err != nil {
			return err
		}
		*dir = d
		defer func() { _ = os.RemoveAll(d) }()
	}
	api := &keystonev1.KeystoneAPI{
		ObjectMeta: metav1.ObjectMeta{Name: "keystone"},
		Spec: keystonev1.KeystoneAPISpec{
			ContainerImage: "debian-keystone", Secret: "osp-secret", Region: "regionOne", AdminProject: "admin",
			AdminUser: "admin", DatabaseAccount: "keystone", PasswordSelectors: keystonev1.PasswordSelector{Admin: "AdminPassword"},
			FernetMaxActiveKeys: ptr.To[int32](5),
			// keystone-operator's default: Keystone's new policies, with their scopes.
			EnableSecureRBAC: true,
		},
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	startCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	stack, err := localkeystone.StartStack(startCtx, *dir, api, *password)
	if err != nil {
		return err
	}
	defer stack.Stop()
	url := stack.Keystone.URL()
	fmt.Printf("localkeystone: Keystone serves %s (ready in %.1f s; logs in %s)\n", url, time.Since(start).Seconds(), *dir)
	if *urlFile != "" {
		if err := os.WriteFile(*urlFile, []byte(url+"\n"), 0o600); err != nil {
			return err
		}
	}
	<-ctx.Done()
	fmt.Println("localkeystone: stopping")
	return nil
}
