// Package keystone builds the objects a KeystoneAPI owns (configuration, keys, jobs, services, deployment) as pure functions of its spec.
package keystone
