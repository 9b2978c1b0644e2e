// Package access finds a namespace's KeystoneAPI and the admin credentials (password,
// CA bundle) that reach its Keystone.
package access
