// Package identity makes Keystone's catalog match what a KeystoneService asks for, idempotently, with gophercloud v2.
package identity
