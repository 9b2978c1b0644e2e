// Package tree draws a namespace's Keystone objects as kubectl keystone tree shows them:
// each KeystoneAPI, its steps (the blocking one marked), its KeystoneServices, their
// KeystoneEndpoints and application credentials, and the credentials' Secrets with the
// consumers that hold them. It reads only the API, so it shows keystone-operator's
// objects too, with what they have.
package tree
