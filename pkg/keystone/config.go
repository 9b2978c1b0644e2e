package keystone

import (
	"bytes"
	"fmt"
	"io/fs"
	"net/url"
	"strings"
	"text/template"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/templates"
)

// Files of the configuration Secret, and where the containers find them.
const (
	KeystoneConf = "keystone.conf"
	CustomConf   = "custom.conf"
	HTTPDConf    = "httpd.conf"
	MyCnf        = "my.cnf"
	// APIKollaConfig is the start-up description of the API container.
	APIKollaConfig = "keystone-api-config.json"

	ConfigMountPath         = "/var/lib/config-data/default"
	KollaConfigMountPath    = "/var/lib/kolla/config_files/config.json"
	FernetKeyRepository     = "/etc/keystone/fernet-keys"
	CredentialKeyRepository = "/etc/keystone/credential-keys"
	// CacheBackend is oslo.cache's backend for a memcached server list.
	CacheBackend = "dogpile.cache.pymemcache"
)

// ConfigInput is what the configuration needs besides the spec.
type ConfigInput struct {
	DatabaseHostname string
	DatabaseUser     string
	DatabasePassword string
	MemcachedServers []string
}

type configData struct {
	Name                    string
	DatabaseURL             string
	CacheBackend            string
	MemcachedServers        string
	FernetKeyRepository     string
	CredentialKeyRepository string
	FernetMaxActiveKeys     int32
	Port                    int
	Processes               int
}

// DatabaseURL is SQLAlchemy's URL for Keystone's database, password escaped.
func DatabaseURL(in ConfigInput) string {
	u := url.URL{
		Scheme:   "mysql+pymysql",
		User:     url.UserPassword(in.DatabaseUser, in.DatabasePassword),
		Host:     in.DatabaseHostname,
		Path:     "/" + DatabaseName,
		RawQuery: "read_default_file=/etc/my.cnf",
	}
	return u.String()
}

// RenderConfig renders the files of the configuration Secret: the templates, then
// customServiceConfig as custom.conf (read after keystone.conf, so it wins), then
// defaultConfigOverwrite, which replaces or adds whole files.
func RenderConfig(api *keystonev1.KeystoneAPI, in ConfigInput) (map[string]string, error) {
	data := configData{
		Name:                    api.Name,
		DatabaseURL:             DatabaseURL(in),
		CacheBackend:            CacheBackend,
		MemcachedServers:        strings.Join(in.MemcachedServers, ","),
		FernetKeyRepository:     FernetKeyRepository,
		CredentialKeyRepository: CredentialKeyRepository,
		FernetMaxActiveKeys:     fernetMaxActiveKeys(api),
		Port:                    Port,
		Processes:               2,
	}
	files := map[string]string{}
	err := fs.WalkDir(templates.KeystoneAPI, "keystoneapi", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := fs.ReadFile(templates.KeystoneAPI, path)
		if err != nil {
			return fmt.Errorf("reading template %s: %w", path, err)
		}
		tmpl, err := template.New(d.Name()).Option("missingkey=error").Parse(string(raw))
		if err != nil {
			return fmt.Errorf("parsing template %s: %w", path, err)
		}
		var out bytes.Buffer
		if err := tmpl.Execute(&out, data); err != nil {
			return fmt.Errorf("rendering template %s: %w", path, err)
		}
		files[d.Name()] = out.String()
		return nil
	})
	if err != nil {
		return nil, err
	}
	files[CustomConf] = api.Spec.CustomServiceConfig
	for name, content := range api.Spec.DefaultConfigOverwrite {
		files[name] = content
	}
	return files, nil
}

func fernetMaxActiveKeys(api *keystonev1.KeystoneAPI) int32 {
	if api.Spec.FernetMaxActiveKeys == nil {
		return 5
	}
	return *api.Spec.FernetMaxActiveKeys
}
