package manager

import (
	"context"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/keystone-stepwise/keystone-operator/internal/identity"
)

// ClusterDNSTransport is an HTTP transport for an operator that runs outside the
// cluster (make run, make e2e): it resolves names through the cluster's DNS server at
// server (host:port), so that Keystone's Service names, such as
// keystone-internal.openstack.svc, reach the Service as they do from a pod. A name
// ending in .svc gets the cluster domain appended, as a pod's search path would.
func ClusterDNSTransport(server, domain string) http.RoundTripper {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	resolver := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return dialer.DialContext(ctx, network, server)
	}}
	lookup := &net.Dialer{Timeout: dialer.Timeout, KeepAlive: dialer.KeepAlive, Resolver: resolver}
	transport := identity.NewTransport()
	transport.DialContext = func(ctx context.Context, network, address string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(address)
		if err == nil && strings.HasSuffix(host, ".svc") {
			address = net.JoinHostPort(host+"."+domain+".", port)
		}
		return lookup.DialContext(ctx, network, address)
	}
	return transport
}
