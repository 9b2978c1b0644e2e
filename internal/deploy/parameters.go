package deploy

import (
	"fmt"
	"maps"
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
		// keystone-operator's keys (its certificate paths are those of this suite's pods),
		// and this suite's earlier ones (a snippet that ranges over VHosts, reading
		// .Interface or .CertFile, renders as before).
		vhost := map[string]any{"ServerName": v.ServerName, "TLS": v.TLS, "Override": len(in.HttpdCustom) > 0,
			"Interface": v.Interface, "CertFile": v.CertFile, "KeyFile": v.KeyFile, "Custom": v.Custom}
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

// secretParameters are the parameters that hold passwords: the database connection and
// the transport URL.
var secretParameters = []string{"DatabaseConnection", "TransportURL"}

// Hidden stands for a password in the parameters an error is taken from.
const Hidden = "(hidden)"

// renderUser renders what a user wrote for keystone-operator, named what, with params,
// as lib-common does. Its error never holds a password, however the template turns
// one (a function's error quoting it, in hexadecimal, a byte at a time): it is the
// error of the same template rendered with every password parameter Hidden; where that
// render does not fail, it says so without the real error.
func renderUser(what, text string, params map[string]any) (string, error) {
	out, err := util.ExecuteTemplateData(text, params)
	if err == nil {
		return out, nil
	}
	masked := maps.Clone(params)
	for _, k := range secretParameters {
		masked[k] = Hidden
	}
	if _, err := util.ExecuteTemplateData(text, masked); err != nil {
		return "", fmt.Errorf("rendering %s: %w", what, err)
	}
	return "", fmt.Errorf("rendering %s: it fails with the values of %s, and not without them: its error, which "+
		"may quote them, is not shown", what, strings.Join(secretParameters, " or "))
}
