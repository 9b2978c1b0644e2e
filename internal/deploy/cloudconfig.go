package deploy

import (
	"fmt"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"sigs.k8s.io/yaml"
)

// Names of the admin's client configuration, which openstackclient mounts: the
// ConfigMap holds no secret, the Secret holds the password.
const (
	OpenStackConfigName       = "openstack-config"
	OpenStackConfigSecretName = "openstack-config-secret"
	// CloudName is the cloud of clouds.yaml, and OS_CLOUD's value.
	CloudName = "default"
)

type cloudsFile struct {
	Clouds map[string]cloud `json:"clouds"`
}

type cloud struct {
	Auth       cloudAuth `json:"auth"`
	RegionName string    `json:"region_name,omitempty"`
}

type cloudAuth struct {
	AuthURL           string `json:"auth_url,omitempty"`
	ProjectName       string `json:"project_name,omitempty"`
	UserName          string `json:"username,omitempty"`
	UserDomainName    string `json:"user_domain_name,omitempty"`
	ProjectDomainName string `json:"project_domain_name,omitempty"`
	Password          string `json:"password,omitempty"`
}

// OpenStackConfig returns the data of the ConfigMap openstack-config: clouds.yaml
// with the admin's cloud at Keystone's public endpoint (no password), and OS_CLOUD.
func OpenStackConfig(api *keystonev1.KeystoneAPI, authURL string) (map[string]string, error) {
	clouds, err := yaml.Marshal(cloudsFile{Clouds: map[string]cloud{CloudName: {
		Auth: cloudAuth{AuthURL: authURL, ProjectName: api.Spec.AdminProject, UserName: api.Spec.AdminUser,
			UserDomainName: "Default", ProjectDomainName: "Default"},
		RegionName: api.Spec.Region,
	}}})
	if err != nil {
		return nil, fmt.Errorf("rendering clouds.yaml: %w", err)
	}
	return map[string]string{"clouds.yaml": string(clouds), "OS_CLOUD": CloudName}, nil
}

// OpenStackConfigSecret returns the data of the Secret openstack-config-secret:
// secure.yaml with the admin's password, and cloudrc, the same cloud as environment
// variables.
func OpenStackConfigSecret(api *keystonev1.KeystoneAPI, authURL, password string) (map[string]string, error) {
	secure, err := yaml.Marshal(cloudsFile{Clouds: map[string]cloud{CloudName: {Auth: cloudAuth{Password: password}}}})
	if err != nil {
		return nil, fmt.Errorf("rendering secure.yaml: %w", err)
	}
	cloudrc := fmt.Sprintf("export OS_AUTH_URL=%s\nexport OS_USERNAME=%s\nexport OS_PROJECT_NAME=%s\n"+
		"export OS_PROJECT_DOMAIN_NAME=Default\nexport OS_USER_DOMAIN_NAME=Default\nexport OS_REGION_NAME=%s\nexport OS_PASSWORD=%s\n",
		shellQuote(authURL), shellQuote(api.Spec.AdminUser), shellQuote(api.Spec.AdminProject), shellQuote(api.Spec.Region),
		shellQuote(password))
	return map[string]string{"secure.yaml": string(secure), "cloudrc": cloudrc}, nil
}
