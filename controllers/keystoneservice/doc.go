// Package keystoneservice reconciles KeystoneService objects into Keystone's catalog, one condition per step.
package keystoneservice
