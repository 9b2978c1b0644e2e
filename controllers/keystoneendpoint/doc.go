// Package keystoneendpoint reconciles KeystoneEndpoints: the endpoints of a service
// in Keystone's catalog, each KeystoneEndpoint owning exactly the endpoints it registered.
package keystoneendpoint
