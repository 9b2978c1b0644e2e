// Package keystoneadmin is how tests act on a real Keystone as its people do, outside
// the operator: its admin looking at what the operator did, a user logging in.
package keystoneadmin

import (
	"context"
	"net/http"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
)

// Client logs user in at Keystone's url (its CA bundle ca, PEM; none for plain HTTP),
// scoped to project of the default domain (unscoped when project is ""), and returns an
// identity client with that token.
func Client(ctx context.Context, url string, ca []byte, user, password, project string) (*gophercloud.ServiceClient, error) {
	provider, err := provider(url, ca)
	if err != nil {
		return nil, err
	}
	opts := gophercloud.AuthOptions{IdentityEndpoint: url + "/v3/", Username: user, Password: password, DomainName: "Default"}
	if project != "" {
		opts.Scope = &gophercloud.AuthScope{ProjectName: project, DomainName: "Default"}
	}
	if err := openstack.Authenticate(ctx, provider, opts); err != nil {
		return nil, err
	}
	return &gophercloud.ServiceClient{ProviderClient: provider, Endpoint: url + "/v3/", Type: "identity"}, nil
}

// Login tells whether Keystone at url gives user a token for password: nil when it
// does, Keystone's answer when it does not (a 401 for a wrong password or a locked-out
// user).
func Login(ctx context.Context, url string, ca []byte, user, password string) error {
	_, err := Client(ctx, url, ca, user, password, "")
	return err
}

// AppCredLogin tells whether Keystone at url gives a token for the application
// credential id with secret: nil when it does.
func AppCredLogin(ctx context.Context, url string, ca []byte, id, secret string) error {
	provider, err := provider(url, ca)
	if err != nil {
		return err
	}
	return openstack.Authenticate(ctx, provider, gophercloud.AuthOptions{IdentityEndpoint: url + "/v3/",
		ApplicationCredentialID: id, ApplicationCredentialSecret: secret})
}

// requestTimeout bounds each request of a test to Keystone: one that hangs fails the
// test, naming the request, instead of holding it until the test binary's timeout.
const requestTimeout = time.Minute

// provider is an unauthenticated client of Keystone at url, trusting ca.
func provider(url string, ca []byte) (*gophercloud.ProviderClient, error) {
	p, err := openstack.NewClient(url + "/v3/")
	if err != nil {
		return nil, err
	}
	transport, err := identity.TransportFor(http.DefaultTransport, ca)
	if err != nil {
		return nil, err
	}
	p.HTTPClient = http.Client{Transport: transport, Timeout: requestTimeout}
	return p, nil
}
