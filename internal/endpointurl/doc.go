// Package endpointurl tells which endpoint URLs Keystone takes, refuses, or a service operator has not finished writing, for the KeystoneEndpoint and the KeystoneAPI's endpoint overrides alike.
package endpointurl
