// Package keystoneapi reconciles KeystoneAPI objects into a running Keystone, one condition per step.
package keystoneapi
