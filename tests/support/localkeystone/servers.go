package localkeystone

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
)

// MariaDB is a MariaDB server on 127.0.0.1 with a throwaway data directory.
type MariaDB struct {
	*Process
	Port   int
	socket string
}

// StartMariaDB initialises a data directory under dir and starts mariadbd. With t it
// serves TLS with t's certificate and refuses clients over TCP without it
// (require_secure_transport), as a Galera with TLS is meant to be used.
func StartMariaDB(ctx context.Context, dir string, t *TLS) (*MariaDB, error) {
	data := filepath.Join(dir, "mariadb")
	if err := run(ctx, nil, "/usr/bin/mariadb-install-db", "--no-defaults", "--user=root", "--datadir="+data,
		"--auth-root-authentication-method=normal", "--skip-test-db"); err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	m := &MariaDB{Port: port, socket: filepath.Join(dir, "mariadb.sock")}
	args := []string{
		"--no-defaults", "--user=root", "--datadir=" + data, "--bind-address=127.0.0.1", "--port=" + strconv.Itoa(port),
		"--socket=" + m.socket, "--pid-file=" + filepath.Join(dir, "mariadb.pid"), "--skip-log-bin",
		"--innodb-flush-log-at-trx-commit=0", "--innodb-doublewrite=0",
	}
	if t != nil {
		paths, err := t.write(dir, "mariadb")
		if err != nil {
			return nil, err
		}
		args = append(args, "--ssl-cert="+paths[0], "--ssl-key="+paths[1], "--ssl-ca="+paths[2], "--require-secure-transport=ON")
	}
	m.Process, err = start(filepath.Join(dir, "mariadb.log"), "/usr/sbin/mariadbd", args, nil)
	if err != nil {
		return nil, err
	}
	if err := m.waitFor("mariadbd", 30*time.Second, func() error { return dial(m.Addr()) }); err != nil {
		m.Stop()
		return nil, err
	}
	return m, nil
}

// Addr is host:port of the server.
func (m *MariaDB) Addr() string { return "127.0.0.1:" + strconv.Itoa(m.Port) }

// SQL runs statements as root.
func (m *MariaDB) SQL(ctx context.Context, statements string) error {
	return run(ctx, nil, "/usr/bin/mariadb", "--no-defaults", "--socket="+m.socket, "-uroot", "-e", statements)
}

// CreateDatabase creates a database and a user that owns it, reachable over TCP,
// as mariadb-operator does for a MariaDBDatabase and MariaDBAccount.
func (m *MariaDB) CreateDatabase(ctx context.Context, name, user, password string) error {
	quote := func(s string) string {
		return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
	}
	return m.SQL(ctx, fmt.Sprintf("CREATE DATABASE IF NOT EXISTS `%s`; CREATE USER IF NOT EXISTS %s@'%%' IDENTIFIED BY %s; "+
		"GRANT ALL PRIVILEGES ON `%s`.* TO %s@'%%'; FLUSH PRIVILEGES;", name, quote(user), quote(password), name, quote(user)))
}

// Memcached is a memcached server on 127.0.0.1.
type Memcached struct {
	*Process
	Port int
	// TLS, when set, is the certificate it serves: it speaks TLS only.
	TLS *TLS
}

// StartMemcached starts memcached; with t it serves TLS only (-Z), with t's certificate.
func StartMemcached(dir string, t *TLS) (*Memcached, error) {
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	m := &Memcached{Port: port, TLS: t}
	args := []string{"-u", "root", "-l", "127.0.0.1", "-p", strconv.Itoa(port), "-U", "0", "-m", "64"}
	if t != nil {
		paths, err := t.write(dir, "memcached")
		if err != nil {
			return nil, err
		}
		args = append(args, "-Z", "-o", "ssl_chain_cert="+paths[0]+",ssl_key="+paths[1])
	}
	m.Process, err = start(filepath.Join(dir, "memcached.log"), "/usr/bin/memcached", args, nil)
	if err != nil {
		return nil, err
	}
	if err := m.waitFor("memcached", 10*time.Second, func() error { return dial(m.Addr()) }); err != nil {
		m.Stop()
		return nil, err
	}
	return m, nil
}

// Addr is host:port of the server.
func (m *Memcached) Addr() string { return "127.0.0.1:" + strconv.Itoa(m.Port) }

// FlushAll empties the cache (memcached's flush_all): what Keystone cached of tokens
// and credentials is read again, with the key repositories it has now.
func (m *Memcached) FlushAll() error {
	reply, err := m.command("flush_all", "OK")
	if err != nil {
		return err
	}
	if len(reply) != 1 || reply[0] != "OK" {
		return fmt.Errorf("memcached answered flush_all with %q", reply)
	}
	return nil
}

// Stats returns memcached's general statistics (the stats command), by name.
func (m *Memcached) Stats() (map[string]string, error) {
	reply, err := m.command("stats", "END")
	if err != nil {
		return nil, err
	}
	stats := map[string]string{}
	for _, line := range reply {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "STAT" {
			stats[f[1]] = f[2]
		}
	}
	return stats, nil
}

// command sends a text protocol command and reads its reply up to the line last,
// over TLS (verifying the server against the CA) when the server speaks it.
func (m *Memcached) command(cmd, last string) ([]string, error) {
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	var conn net.Conn
	var err error
	if m.TLS != nil {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(m.TLS.CA)
		conn, err = tls.DialWithDialer(dialer, "tcp", m.Addr(), &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})
	} else {
		conn, err = dialer.Dial("tcp", m.Addr())
	}
	if err != nil {
		return nil, fmt.Errorf("connecting to memcached: %w", err)
	}
	defer func() { _ = conn.Close() }()
	if err := conn.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
		return nil, err
	}
	if _, err := conn.Write([]byte(cmd + "\r\n")); err != nil {
		return nil, fmt.Errorf("sending %s to memcached: %w", cmd, err)
	}
	var reply []string
	r := bufio.NewReader(conn)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("reading memcached's reply to %s: %w", cmd, err)
		}
		line = strings.TrimSpace(line)
		reply = append(reply, line)
		if line == last || strings.HasPrefix(line, "ERROR") || strings.HasPrefix(line, "SERVER_ERROR") {
			return reply, nil
		}
	}
}

// Keystone is Keystone's WSGI application served by uwsgi on 127.0.0.1.
type Keystone struct {
	*Process
	Port int
	// TLS, when set, serves HTTPS with its certificate.
	TLS *TLS
	// ConfigFiles are read in order; later files win.
	ConfigFiles []string
	// ManageFiles are read by keystone-manage in a job after ConfigFiles (ManageConf).
	ManageFiles []string
}

// URL is Keystone's base URL.
func (k *Keystone) URL() string {
	if k.TLS != nil {
		return "https://127.0.0.1:" + strconv.Itoa(k.Port)
	}
	return "http://127.0.0.1:" + strconv.Itoa(k.Port)
}

// TLS is a server certificate and key for 127.0.0.1 and the CA that signed it, PEM.
type TLS struct{ Cert, Key, CA []byte }

// write writes the certificate, key and CA into dir as <name>.crt, <name>.key and
// <name>-ca.crt, and returns their paths in that order.
func (t *TLS) write(dir, name string) ([]string, error) {
	return WriteFiles(dir, []string{name + ".crt", name + ".key", name + "-ca.crt"},
		map[string]string{name + ".crt": string(t.Cert), name + ".key": string(t.Key), name + "-ca.crt": string(t.CA)})
}

// client is an HTTP client of this Keystone: it trusts the TLS CA alone when set.
func (k *Keystone) client() (*http.Client, error) {
	if k.TLS == nil {
		return http.DefaultClient, nil
	}
	transport, err := identity.TransportFor(&http.Transport{}, k.TLS.CA)
	if err != nil {
		return nil, err
	}
	return &http.Client{Transport: transport}, nil
}

// Manage runs keystone-manage with the configuration files and extra environment.
func (k *Keystone) Manage(ctx context.Context, env []string, args ...string) error {
	var full []string
	for _, f := range k.ConfigFiles {
		full = append(full, "--config-file", f)
	}
	return run(ctx, env, "/usr/bin/keystone-manage", append(full, args...)...)
}

// ManageShell runs what a Job's container would run: a shell command line in which
// keystone-manage reads the job's configuration files (deploy.ManageConfigArgs)
// from where the stack wrote them, ConfigFiles then ManageFiles.
func (k *Keystone) ManageShell(ctx context.Context, env []string, command string) error {
	var files []string
	for _, f := range append(append([]string(nil), k.ConfigFiles...), k.ManageFiles...) {
		files = append(files, "--config-file "+f)
	}
	job := "keystone-manage " + deploy.ManageConfigArgs + " "
	if !strings.Contains(command, job) {
		return fmt.Errorf("%q does not run keystone-manage with the job's configuration (%s)", command, deploy.ManageConfigArgs)
	}
	command = strings.ReplaceAll(command, job, "/usr/bin/keystone-manage "+strings.Join(files, " ")+" ")
	return run(ctx, env, "/bin/bash", "-c", command)
}

// Processes is how many uwsgi processes serve Keystone, one thread each, as
// keystone-operator's httpd runs it (WSGIDaemonProcess processes=N threads=1): two per
// CPU and at least four, since a process waits on MariaDB and memcached too. Threads
// in one process raced: with two processes of four threads, the first concurrent
// requests a fresh process answered included a 403 to the admin (identity:list_services,
// seen in make demo under CI).
func Processes() int {
	return max(4, 2*runtime.NumCPU())
}

// Serve starts uwsgi with Keystone's public WSGI application on Port (a free one when
// 0) and waits until it answers.
func (k *Keystone) Serve(dir string) error {
	if k.Port == 0 {
		port, err := FreePort()
		if err != nil {
			return err
		}
		k.Port = port
	}
	port := k.Port
	socket := []string{"--http-socket", "127.0.0.1:" + strconv.Itoa(port)}
	if k.TLS != nil {
		paths, err := k.TLS.write(dir, "keystone")
		if err != nil {
			return err
		}
		socket = []string{"--https-socket", "127.0.0.1:" + strconv.Itoa(port) + "," + paths[0] + "," + paths[1]}
	}
	var err error
	k.Process, err = start(filepath.Join(dir, "keystone.log"), "/usr/bin/uwsgi", []string{
		"--plugin", "python3", socket[0], socket[1],
		// Without it Go clients sometimes get "connection reset by peer" on a reused connection.
		"--add-header", "Connection: close",
		"--wsgi-file", "/usr/bin/keystone-wsgi-public", "--processes", strconv.Itoa(Processes()), "--threads", "1",
		"--die-on-term", "--need-app", "--master",
	}, []string{"OS_KEYSTONE_CONFIG_FILES=" + strings.Join(k.ConfigFiles, ";")})
	if err != nil {
		return err
	}
	return k.waitFor("keystone", 60*time.Second, func() error { return dial("127.0.0.1:" + strconv.Itoa(port)) })
}

// WriteFiles writes name → content into dir and returns the paths in the order given.
func WriteFiles(dir string, names []string, files map[string]string) ([]string, error) {
	var paths []string
	for _, name := range names {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(files[name]), 0o600); err != nil {
			return nil, fmt.Errorf("writing %s: %w", p, err)
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// WriteKeyRepository writes keys as files 0..n-1 of a key repository in dir,
// replacing what was there, as a Secret volume would.
func WriteKeyRepository(dir string, keys []string) error {
	files := make(map[string]string, len(keys))
	for i, k := range keys {
		files[strconv.Itoa(i)] = k
	}
	return WriteKeyFiles(dir, files)
}

// WriteKeyFiles makes dir a key repository holding exactly files (name to key), such as
// a repository with gaps ("0", "2", "3"), replacing what it held.
func WriteKeyFiles(dir string, files map[string]string) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("clearing %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	for name, k := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(k), 0o600); err != nil {
			return fmt.Errorf("writing key %s: %w", name, err)
		}
	}
	return nil
}
