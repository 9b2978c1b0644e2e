package deploy

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"slices"
	"strings"
	"sync"
	"text/template"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/templates"
	memcachedv1 "github.com/openstack-k8s-operators/infra-operator/apis/memcached/v1beta1"
	"k8s.io/utils/ptr"
)

// Files of the configuration Secret, and where the containers find them.
const (
	KeystoneConf = "keystone.conf"
	CustomConf   = "custom.conf"
	MyCnf        = "my.cnf"
	// ManageConf bounds the database retries of keystone-manage in the jobs.
	ManageConf = "keystone-manage.conf"
	// KeyRepositoriesConf names the key repositories (FernetKeyRepository,
	// CredentialKeyRepository), read from KeyRepositoriesConfPath: in keystone.conf.d,
	// so that a keystone.conf replaced whole (defaultConfigOverwrite) finds the keys,
	// and before custom.conf, which may name others.
	KeyRepositoriesConf     = "key-repositories.conf"
	KeyRepositoriesConfPath = "/etc/keystone/keystone.conf.d/00-key-repositories.conf"
	// HttpdConf is httpd's configuration, read at HttpdConfDir/httpd.conf.
	HttpdConf = "httpd.conf"
	// HttpdConfDir is httpd's configuration directory in the image.
	HttpdConfDir = "/etc/httpd/conf"

	// FernetKeyRepository and CredentialKeyRepository are the key repositories Keystone
	// reads, made at each container's start (LinkKeys).
	FernetKeyRepository     = KeyRepositoriesDir + "/fernet-keys"
	CredentialKeyRepository = KeyRepositoriesDir + "/credential-keys"
	// MyCnfPath is where the API and job containers find my.cnf.
	MyCnfPath = "/etc/my.cnf"
	// CacheBackend is oslo.cache's backend for a memcached server list.
	CacheBackend = "dogpile.cache.pymemcache"

	// JobDBRetries and JobDBRetryInterval (seconds) bound how long one attempt of a
	// job waits for an unreachable database: about a minute.
	JobDBRetries       = 10
	JobDBRetryInterval = 6
	// ManageConfigArgs are the configuration files keystone-manage reads in a job, in
	// order (later files win): Keystone's own, custom.conf, then ManageConf.
	ManageConfigArgs = "--config-file /etc/keystone/keystone.conf --config-dir /etc/keystone/keystone.conf.d " +
		"--config-file /etc/keystone/" + ManageConf
)

// ConfigInput is what the configuration needs besides the spec.
type ConfigInput struct {
	DatabaseHostname string
	DatabaseUser     string
	DatabasePassword string
	MemcachedServers []string
	// MemcachedServersWithInet is the Memcached's status.serverListWithInet, which
	// keystone-operator's templates offer as MemcachedServersWithInet.
	MemcachedServersWithInet []string
	// MyCnfPath is where the container finds my.cnf; MyCnfPath when empty.
	MyCnfPath string
	// HttpdCustom holds the snippets of httpdCustomization.customConfigSecret, by key.
	HttpdCustom map[string]string
	// FederationFiles are the federated realms' metadata files, by file name.
	FederationFiles map[string]string
	// TransportURL is where notifications go; none are sent when empty.
	TransportURL string
	// QuorumQueues tells oslo.messaging to declare quorum queues.
	QuorumQueues bool
	// DatabaseTLS: the database instance serves TLS (its MariaDBDatabase's
	// status.tlsSupport) and the pods have the CA bundle of tls.caBundleSecretName to
	// verify it with, as keystone-operator decides.
	DatabaseTLS bool
	// MemcachedTLS: the Memcached serves TLS (its status.tlsSupport); MemcachedMTLS: it
	// also asks for client certificates (spec.tls.mtls), mounted by WithMemcachedMTLS.
	MemcachedTLS  bool
	MemcachedMTLS bool
	// CABundlePath is where the containers find the CA bundle; CABundlePath when empty.
	CABundlePath string
}

// configData is what the templates are rendered with: publicData and the secrets.
type configData struct {
	publicData
	DatabasePassword string
	// TransportURL holds RabbitMQ's password.
	TransportURL string
}

// publicData is configData without its secrets: what this suite's templates read, and,
// with keystone-operator's parameters (userParameters), what users' templates are
// rendered with.
type publicData struct {
	Name                    string
	DatabaseURL             string
	DatabaseUser            string
	CacheBackend            string
	MemcachedServers        string
	FernetKeyRepository     string
	CredentialKeyRepository string
	FernetMaxActiveKeys     int32
	Port                    int
	Processes               int32
	APITimeout              int
	EnableSecureRBAC        bool
	JobDBRetries            int
	JobDBRetryInterval      int
	// ConfigDir is httpd's configuration directory, where the httpdCustomization
	// snippets are mounted; MetadataDir where the federated realms' metadata is.
	ConfigDir   string
	MetadataDir string
	// HttpdRunDir is httpd's run directory (its PID file, mod_wsgi's sockets).
	HttpdRunDir string
	// DrainingMarker is the preStop hook's file (DrainingMarker).
	DrainingMarker string
	VHosts         []vhost
	QuorumQueues   bool
	DatabaseTLS    bool
	MemcachedTLS   bool
	MemcachedMTLS  bool
	// CABundle is the CA bundle's path when tls.caBundleSecretName is set, else "".
	CABundle string
	// MemcachedCert, MemcachedKey and MemcachedCA are where the memcached client
	// certificate is mounted (infra-operator's paths).
	MemcachedCert, MemcachedKey, MemcachedCA string
	// Federation lists the federated realms' metadata files: the config Secret's key
	// and the file name in FederationMetadataDir.
	Federation []federationFile
	// ExtraFiles are the files of defaultConfigOverwrite that no template renders:
	// they go to /etc/keystone, where Keystone reads policy.yaml and the like.
	ExtraFiles []string
}

// vhost is httpd's virtual host of one interface.
type vhost struct {
	Interface  string
	ServerName string
	TLS        bool
	CertFile   string
	KeyFile    string
	// Custom are the files of httpdCustomization included at the end.
	Custom []string
}

// federationFile is one federated realm's metadata file.
type federationFile struct{ Key, Name string }

// FederationMetadataDir is where httpd's mod_auth_openidc finds the realms' metadata, and
// writes what it refreshes or registers (keystone-operator makes it writable by the
// keystone user): an EmptyDir, filled at start with the realms' files, mounted read-only
// in FederationFilesDir.
const (
	// ConfigDataDir is where the API pods find every file of the configuration Secret,
	// as keystone-operator's pods do (its kolla source directory).
	ConfigDataDir         = "/var/lib/config-data/default"
	FederationMetadataDir = "/var/lib/httpd/metadata"
	FederationFilesDir    = "/var/lib/config-data/federation"
)

// APIFiles are the files of the configuration Secret the API container reads, by
// where it reads them: Keystone's (keystone.conf, custom.conf in its conf.d, the files
// of defaultConfigOverwrite that no template renders, in /etc/keystone, where Keystone
// looks for policy.yaml and the like; keystone-operator leaves them in its staging
// directory, ConfigDataDir, where the API pods have every file too), PyMySQL's my.cnf, httpd's httpd.conf and the
// httpdCustomization snippets it includes, and the federated realms' metadata (in
// FederationFilesDir, copied at start where mod_auth_openidc reads and writes it).
func APIFiles(api *keystonev1.KeystoneAPI, in ConfigInput) map[string]string {
	data := templateData(api, in)
	files := map[string]string{
		"/etc/keystone/" + KeystoneConf:               KeystoneConf,
		"/etc/keystone/keystone.conf.d/" + CustomConf: CustomConf,
		KeyRepositoriesConfPath:                       KeyRepositoriesConf,
		MyCnfPath:                                     MyCnf,
		HttpdConfDir + "/" + HttpdConf:                HttpdConf,
	}
	for _, name := range data.ExtraFiles {
		files["/etc/keystone/"+name] = name
	}
	for _, v := range data.VHosts {
		for _, name := range v.Custom {
			files[HttpdConfDir+"/"+name] = name
		}
	}
	for _, f := range data.Federation {
		files[FederationFilesDir+"/"+f.Name] = f.Key
	}
	return files
}

// HttpdCustomFile is the file of the configuration Secret holding an
// httpdCustomization snippet for an interface.
func HttpdCustomFile(iface, key string) string { return "httpd_custom_" + iface + "_" + key }

// DatabaseURL is SQLAlchemy's URL for Keystone's database. It holds no credentials:
// PyMySQL reads them from the [client] section of myCnf, which needs no escaping
// (a percent-escaped password breaks db_sync: alembic interpolates '%').
func DatabaseURL(in ConfigInput) string {
	u := url.URL{
		Scheme:   "mysql+pymysql",
		Host:     in.DatabaseHostname,
		Path:     "/" + DatabaseName,
		RawQuery: "read_default_file=" + in.myCnfPath(),
	}
	return u.String()
}

func (in ConfigInput) caBundlePath() string {
	if in.CABundlePath == "" {
		return CABundlePath
	}
	return in.CABundlePath
}

func (in ConfigInput) myCnfPath() string {
	if in.MyCnfPath == "" {
		return MyCnfPath
	}
	return in.MyCnfPath
}

// Rendered is the configuration Secret's files, and which of the users' files are used
// as written.
type Rendered struct {
	Files map[string]string
	// AsWritten says, for each file of customServiceConfig and defaultConfigOverwrite
	// that is no template keystone-operator's parameters render, why: it is used as
	// written, as keystone-operator uses it.
	AsWritten []string
}

// RenderConfig is Render's files.
func RenderConfig(api *keystonev1.KeystoneAPI, in ConfigInput) (map[string]string, error) {
	r, err := Render(api, in)
	return r.Files, err
}

// Render renders the files of the configuration Secret: the templates, then
// customServiceConfig as custom.conf (read after keystone.conf, so it wins), then
// defaultConfigOverwrite, which replaces or adds whole files. What users write is
// rendered as keystone-operator renders it (parameters.go): httpdCustomization's
// snippets must render; customServiceConfig and defaultConfigOverwrite's files are
// expanded where they render, and used as written where they do not.
func Render(api *keystonev1.KeystoneAPI, in ConfigInput) (Rendered, error) {
	if err := in.validate(); err != nil {
		return Rendered{}, err
	}
	data := templateData(api, in)
	parsed, err := configTemplates()
	if err != nil {
		return Rendered{}, err
	}
	r := Rendered{Files: map[string]string{}}
	for file, t := range parsed {
		if r.Files[file], err = execute(t, data); err != nil {
			return Rendered{}, err
		}
	}
	params := userParameters(api, in, data)
	for _, k := range slices.Sorted(maps.Keys(in.HttpdCustom)) {
		out, err := renderUser("httpd customization "+k, in.HttpdCustom[k], params)
		if err != nil {
			return Rendered{}, err
		}
		for _, iface := range Interfaces {
			r.Files[HttpdCustomFile(iface, k)] = out
		}
	}
	for _, f := range data.Federation {
		r.Files[f.Key] = in.FederationFiles[f.Name]
	}
	expand := func(file, what, text string) {
		out, err := renderUser(what, text, params)
		if err != nil {
			out = text
			r.AsWritten = append(r.AsWritten, err.Error())
		}
		r.Files[file] = out
	}
	expand(CustomConf, "customServiceConfig", api.Spec.CustomServiceConfig)
	for _, name := range slices.Sorted(maps.Keys(api.Spec.DefaultConfigOverwrite)) {
		expand(name, "defaultConfigOverwrite "+name, api.Spec.DefaultConfigOverwrite[name])
	}
	return r, nil
}

// validate refuses input the configuration files cannot hold.
func (in ConfigInput) validate() error {
	if strings.ContainsAny(in.DatabaseUser+in.DatabasePassword, "\r\n") {
		return errors.New("the database user name or password contains a line break, which my.cnf cannot hold")
	}
	for name := range in.FederationFiles {
		if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\\"\x00\r\n") {
			return fmt.Errorf("federated realm file name %q is not a file name", name)
		}
	}
	if strings.ContainsAny(in.TransportURL, "\r\n") {
		return errors.New("the transport URL contains a line break, which keystone.conf cannot hold")
	}
	return nil
}

// templateData is what the templates of the configuration Secret are rendered with.
func templateData(api *keystonev1.KeystoneAPI, in ConfigInput) configData {
	data := configData{DatabasePassword: in.DatabasePassword, TransportURL: in.TransportURL}
	data.publicData = publicData{
		Name:                    api.Name,
		DatabaseURL:             DatabaseURL(in),
		DatabaseUser:            in.DatabaseUser,
		CacheBackend:            CacheBackend,
		MemcachedServers:        strings.Join(in.MemcachedServers, ","),
		FernetKeyRepository:     FernetKeyRepository,
		CredentialKeyRepository: CredentialKeyRepository,
		FernetMaxActiveKeys:     fernetMaxActiveKeys(api),
		Port:                    Port,
		Processes:               ptr.Deref(api.Spec.HttpdCustomization.ProcessNumber, 3),
		APITimeout:              RequestTimeout(api),
		EnableSecureRBAC:        api.Spec.EnableSecureRBAC,
		JobDBRetries:            JobDBRetries,
		JobDBRetryInterval:      JobDBRetryInterval,
		ConfigDir:               HttpdConfDir,
		MetadataDir:             FederationMetadataDir,
		HttpdRunDir:             HttpdRunDir,
		DrainingMarker:          DrainingMarker,
		QuorumQueues:            in.QuorumQueues,
		MemcachedTLS:            in.MemcachedTLS,
		MemcachedMTLS:           in.MemcachedTLS && in.MemcachedMTLS,
		MemcachedCert:           memcachedv1.CertMountPath(),
		MemcachedKey:            memcachedv1.KeyMountPath(),
		MemcachedCA:             memcachedv1.CaMountPath(),
	}
	if api.Spec.TLS.CaBundleSecretName != "" {
		data.CABundle = in.caBundlePath()
	}
	// Without a CA bundle to verify the server with, keystone-operator connects in clear.
	data.DatabaseTLS = in.DatabaseTLS && data.CABundle != ""
	for i, name := range slices.Sorted(maps.Keys(in.FederationFiles)) {
		data.Federation = append(data.Federation, federationFile{Key: fmt.Sprintf("federation-%d", i), Name: name})
	}
	for _, name := range slices.Sorted(maps.Keys(api.Spec.DefaultConfigOverwrite)) {
		if _, err := fs.Stat(templates.KeystoneAPI, "keystoneapi/"+name); err != nil && name != CustomConf {
			data.ExtraFiles = append(data.ExtraFiles, name)
		}
	}
	for _, iface := range Interfaces {
		v := vhost{Interface: iface, ServerName: fmt.Sprintf("%s.%s.svc", ServiceName(api, iface), api.Namespace)}
		if TLSEnabled(api, iface) {
			v.TLS, v.CertFile, v.KeyFile = true, CertPath(iface), KeyPath(iface)
		}
		for _, k := range slices.Sorted(maps.Keys(in.HttpdCustom)) {
			v.Custom = append(v.Custom, HttpdCustomFile(iface, k))
		}
		data.VHosts = append(data.VHosts, v)
	}
	return data
}

// execute executes tmpl on data; its name names it in errors.
func execute(tmpl *template.Template, data any) (string, error) {
	var out bytes.Buffer
	if err := tmpl.Execute(&out, data); err != nil {
		return "", fmt.Errorf("rendering %s: %w", tmpl.Name(), err)
	}
	return out.String(), nil
}

// parse parses text as the template named what.
func parse(what, text string) (*template.Template, error) {
	tmpl, err := template.New(what).Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", what, err)
	}
	return tmpl, nil
}

// configTemplates are the configuration Secret's templates (templates.KeystoneAPI's
// keystoneapi directory) by the file each renders, parsed once: they are built into
// the binary, and parsing them was most of a render.
var configTemplates = sync.OnceValues(func() (map[string]*template.Template, error) {
	parsed := map[string]*template.Template{}
	err := fs.WalkDir(templates.KeystoneAPI, "keystoneapi", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := fs.ReadFile(templates.KeystoneAPI, path)
		if err != nil {
			return fmt.Errorf("reading template %s: %w", path, err)
		}
		tmpl, err := parse("template "+path, string(raw))
		parsed[d.Name()] = tmpl
		return err
	})
	return parsed, err
})

func fernetMaxActiveKeys(api *keystonev1.KeystoneAPI) int32 {
	if api.Spec.FernetMaxActiveKeys == nil {
		return 5
	}
	return *api.Spec.FernetMaxActiveKeys
}
