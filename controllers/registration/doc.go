// Package registration is what the three controllers that register things in Keystone
// (KeystoneService, KeystoneEndpoint, KeystoneApplicationCredential) share: the session
// a round talks to Keystone with, mirroring the namespace's KeystoneAPI, and reporting
// Keystone's answers as step conditions.
package registration
