package localkeystone

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
)

// Stack is a Keystone deployed the way the operator deploys it, but as processes on
// 127.0.0.1: the operator's rendered configuration and generated keys, its db-sync
// and bootstrap commands run by Debian's keystone-manage against MariaDB, served by
// uwsgi with memcached.
type Stack struct {
	Dir        string
	DB         *MariaDB
	Memcached  *Memcached
	Keystone   *Keystone
	FernetDir  string
	FernetKeys []string
	// Files are the rendered configuration files.
	Files map[string]string
}

// StackDatabasePassword is the password of the keystone database user of the local
// stack; it holds characters that would need escaping in a URL.
const StackDatabasePassword = "db-p@ss/w:rd" //nolint:gosec // a throwaway password of a local test database

// StackOption changes how StartStack deploys Keystone.
type StackOption func(*stackOptions)

type stackOptions struct {
	productionHashing bool
	tls               *TLS
	backendTLS        *TLS
}

// WithTLS serves Keystone over HTTPS with t's certificate.
func WithTLS(t TLS) StackOption {
	return func(o *stackOptions) { o.tls = &t }
}

// WithBackendTLS serves MariaDB (refusing clients without TLS) and memcached (TLS only)
// with t's certificate, and renders Keystone's configuration as the operator does for a
// Galera and a Memcached with TLS: the KeystoneAPI must name a CA bundle
// (tls.caBundleSecretName), whose file here holds t's CA.
func WithBackendTLS(t TLS) StackOption {
	return func(o *stackOptions) { o.backendTLS = &t }
}

// ProductionHashing keeps Keystone's default password hashing (bcrypt, 12 rounds:
// about 0.2 s of processor time per password set here), as a production Keystone
// hashes; without it the stack hashes with 4 rounds, for tests that set passwords by
// the hundred and measure nothing.
func ProductionHashing() StackOption {
	return func(o *stackOptions) { o.productionHashing = true }
}

// StartStack deploys api's Keystone under dir with adminPassword. In a pod the keys
// are mounted where keystone.conf says; here customServiceConfig points Keystone at
// dir (and, unless ProductionHashing, makes password hashing cheap), which also
// exercises custom.conf winning.
func StartStack(ctx context.Context, dir string, api *keystonev1.KeystoneAPI, adminPassword string, opts ...StackOption) (_ *Stack, err error) {
	var o stackOptions
	for _, opt := range opts {
		opt(&o)
	}
	if err := NotInstalled(); err != nil {
		return nil, err
	}
	s := &Stack{Dir: dir, FernetDir: filepath.Join(dir, "fernet-keys")}
	defer func() {
		if err != nil {
			s.Stop()
		}
	}()
	if err = s.startBackends(ctx, o.backendTLS); err != nil {
		return nil, err
	}
	api = api.DeepCopy()
	paths, err := s.writeConfig(api, o)
	if err != nil {
		return nil, err
	}
	if err = s.writeKeys(int(*api.Spec.FernetMaxActiveKeys)); err != nil {
		return nil, err
	}
	// my.cnf is read by PyMySQL, not by oslo.config.
	s.Keystone = &Keystone{ConfigFiles: paths[:2], ManageFiles: paths[2:3], TLS: o.tls}
	if s.Keystone.Port, err = FreePort(); err != nil {
		return nil, err
	}
	if err = s.deploy(ctx, api, adminPassword); err != nil {
		// The servers stop with this error: their logs go with it.
		return nil, fmt.Errorf("%w\n%s", err, s.Logs())
	}
	return s, nil
}

// startBackends starts MariaDB with Keystone's database and user, and memcached.
func (s *Stack) startBackends(ctx context.Context, backendTLS *TLS) error {
	var err error
	if s.DB, err = StartMariaDB(ctx, s.Dir, backendTLS); err != nil {
		return err
	}
	if err = s.DB.CreateDatabase(ctx, deploy.DatabaseName, "keystone", StackDatabasePassword); err != nil {
		return err
	}
	s.Memcached, err = StartMemcached(s.Dir, backendTLS)
	return err
}

// CredentialDir is the credential key repository.
func (s *Stack) CredentialDir() string { return filepath.Join(s.Dir, "credential-keys") }

// writeConfig renders api's configuration for the servers of the stack, pointing
// Keystone at the stack's key repositories (api is changed), and writes the files
// Keystone and keystone-manage read; it returns their paths: keystone.conf,
// custom.conf, keystone-manage.conf, my.cnf.
func (s *Stack) writeConfig(api *keystonev1.KeystoneAPI, o stackOptions) ([]string, error) {
	api.Spec.CustomServiceConfig += fmt.Sprintf("\n[fernet_tokens]\nkey_repository = %[1]s\n[fernet_receipts]\nkey_repository = %[1]s\n"+
		"[credential]\nkey_repository = %[2]s\n", s.FernetDir, s.CredentialDir())
	if !o.productionHashing {
		api.Spec.CustomServiceConfig += "[identity]\npassword_hash_rounds = 4\n"
	}
	in := deploy.ConfigInput{
		DatabaseHostname: s.DB.Addr(), DatabaseUser: "keystone", DatabasePassword: StackDatabasePassword,
		MemcachedServers: []string{s.Memcached.Addr()}, MyCnfPath: filepath.Join(s.Dir, deploy.MyCnf),
	}
	if o.backendTLS != nil {
		if api.Spec.TLS.CaBundleSecretName == "" {
			return nil, errors.New("WithBackendTLS: the KeystoneAPI names no CA bundle (tls.caBundleSecretName)")
		}
		paths, err := o.backendTLS.write(s.Dir, "backend")
		if err != nil {
			return nil, err
		}
		in.DatabaseTLS, in.MemcachedTLS, in.CABundlePath = true, true, paths[2]
	}
	var err error
	if s.Files, err = deploy.RenderConfig(api, in); err != nil {
		return nil, err
	}
	return WriteFiles(s.Dir, []string{deploy.KeystoneConf, deploy.CustomConf, deploy.ManageConf, deploy.MyCnf}, s.Files)
}

// writeKeys generates fernet and credential keys as the operator does and writes
// them into the stack's key repositories.
func (s *Stack) writeKeys(maxActive int) error {
	keys, err := deploy.NewKeysData(maxActive)
	if err != nil {
		return err
	}
	s.FernetKeys = deploy.FernetKeys(keys)
	if err = WriteKeyRepository(s.FernetDir, s.FernetKeys); err != nil {
		return err
	}
	return WriteKeyRepository(s.CredentialDir(), deploy.CredentialKeys(keys))
}

// deploy runs api's db-sync and bootstrap commands, serves Keystone and warms it.
func (s *Stack) deploy(ctx context.Context, api *keystonev1.KeystoneAPI, adminPassword string) error {
	api = api.DeepCopy()
	api.Status.APIEndpoints = map[string]string{keystonev1.EndpointPublic: s.Keystone.URL(), keystonev1.EndpointInternal: s.Keystone.URL()}
	jobs := deploy.Gathered{API: api, DBSyncHash: "stack", BootstrapHash: "stack"}
	sync := jobs.DBSyncJob().Spec.Template.Spec.Containers[0].Command[2]
	if err := s.Keystone.ManageShell(ctx, nil, JobShell(sync)); err != nil {
		return fmt.Errorf("db-sync: %w", err)
	}
	boot := jobs.BootstrapJob().Spec.Template.Spec.Containers[0].Command[2]
	if err := s.Keystone.ManageShell(ctx, []string{deploy.BootstrapPasswordEnv + "=" + adminPassword}, JobShell(boot)); err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	if err := s.Keystone.Serve(s.Dir); err != nil {
		return err
	}
	return s.Keystone.Warm(ctx, api.Spec.AdminUser, adminPassword, api.Spec.AdminProject)
}

// JobShell is what a Job's container runs once its key repositories are made (deploy.LinkKeys).
func JobShell(cmd string) string {
	return strings.TrimPrefix(cmd, deploy.StartCommand(""))
}

// Stop stops every server of the stack.
func (s *Stack) Stop() {
	if s.Keystone != nil {
		s.Keystone.Stop()
	}
	if s.Memcached != nil {
		s.Memcached.Stop()
	}
	if s.DB != nil {
		s.DB.Stop()
	}
}

// Logs returns the tail of each server's log, for a failing test.
func (s *Stack) Logs() string {
	var b strings.Builder
	for _, name := range []string{"keystone.log", "mariadb.log", "memcached.log"} {
		data, err := os.ReadFile(filepath.Join(s.Dir, name))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		text := string(data)
		if len(text) > 3000 {
			text = text[len(text)-3000:]
		}
		fmt.Fprintf(&b, "==> %s <==\n%s\n", name, text)
	}
	return b.String()
}
