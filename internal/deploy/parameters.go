package deploy

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/openstack-k8s-operators/lib-common/modules/common/util"
)

// What users write for keystone-operator (httpdCustomization's snippets,
// customServiceConfig, defaultConfigOverwrite's files) is a Go template there, rendered
// by lib-common's util.ExecuteTemplateData (its functions add, indent, lower,
// removeNewLines, removeNewLinesInSections, execTempl; a missing key an error) with the
// parameters of its generateServiceConfigMaps: snippets must render (an error fails the
// configuration), the other files are used as written when they do not
// (lib-common's secret.createOrUpdateSecret). The same here, with the same names.

// upstreamParameters are keystone-operator's template parameters, by its names and in
// its shapes: VHosts a map by interface, the database connection with its password.
func upstreamParameters(api *keystonev1.KeystoneAPI, in ConfigInput, data configData) map[string]any {
	endpoints := Endpoints(api)
	p := map[string]any{
		"MemcachedServers":         strings.Join(in.MemcachedServers, ","),
		"MemcachedServersWithInet": strings.Join(in.MemcachedServersWithInet, ","),
		"MemcachedTLS":             in.MemcachedTLS,
		"TransportURL":             in.TransportURL,
		"DatabaseConnection":       upstreamDatabaseConnection(in),
		"ProcessNumber":            data.Processes,
		"EnableSecureRBAC":         api.Spec.EnableSecureRBAC,
		"FernetMaxActiveKeys":      data.FernetMaxActiveKeys,
		"KeystoneEndpointPublic":   endpoints[keystonev1.EndpointPublic],
		"KeystoneEndpointInternal": endpoints[keystonev1.EndpointInternal],
		"QuorumQueues":             in.QuorumQueues,
		"TimeOut":                  api.Spec.APITimeout,
	}
	if in.MemcachedMTLS {
		p["MemcachedAuthCert"], p["MemcachedAuthKey"], p["MemcachedAuthCa"] = data.MemcachedCert, data.MemcachedKey, data.MemcachedCA
	}
	vhosts := map[string]any{}
	for _, v := range data.VHosts {
		vhost := map[string]any{"ServerName": v.ServerName, "TLS": v.TLS, "Override": len(in.HttpdCustom) > 0}
		if v.TLS {
			vhost["SSLCertificateFile"], vhost["SSLCertificateKeyFile"] = v.CertFile, v.KeyFile
		}
		vhosts[v.Interface] = vhost
	}
	p["VHosts"] = vhosts
	return p
}

// upstreamDatabaseConnection is keystone-operator's DatabaseConnection parameter: the
// credentials in the URL, as it formats them (not escaped), my.cnf for the rest.
func upstreamDatabaseConnection(in ConfigInput) string {
	return fmt.Sprintf("mysql+pymysql://%s:%s@%s/%s?read_default_file=/etc/my.cnf", in.DatabaseUser, in.DatabasePassword,
		in.DatabaseHostname, DatabaseName)
}

// userParameters are what users' templates are rendered with: keystone-operator's
// parameters, and this suite's own names of publicData besides (docs/keystoneapi.md),
// keystone-operator's winning where a name is both (VHosts).
func userParameters(api *keystonev1.KeystoneAPI, in ConfigInput, data configData) map[string]any {
	p := map[string]any{}
	v := reflect.ValueOf(data.publicData)
	for i := range v.NumField() {
		if f := v.Type().Field(i); f.IsExported() {
			p[f.Name] = v.Field(i).Interface()
		}
	}
	for k, value := range upstreamParameters(api, in, data) {
		p[k] = value
	}
	return p
}

// renderUser renders what a user wrote for keystone-operator, named what, with params,
// as lib-common does; an error never quotes a password (redact).
func renderUser(what, text string, params map[string]any, redact func(string) string) (string, error) {
	out, err := util.ExecuteTemplateData(text, params)
	if err != nil {
		return "", fmt.Errorf("rendering %s: %w", what, errors.New(redact(err.Error())))
	}
	return out, nil
}

// redactor replaces in a message the secrets of in (the database password and its
// connection URL, the transport URL) with "(hidden)".
func redactor(in ConfigInput) func(string) string {
	var secrets []string
	for _, s := range []string{upstreamDatabaseConnection(in), in.TransportURL, in.DatabasePassword} {
		if len(s) >= 4 {
			secrets = append(secrets, s)
		}
	}
	return func(msg string) string {
		for _, s := range secrets {
			msg = strings.ReplaceAll(msg, s, "(hidden)")
		}
		return msg
	}
}
