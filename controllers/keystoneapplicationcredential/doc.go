// Package keystoneapplicationcredential reconciles KeystoneApplicationCredentials: a
// service's application credential in Keystone and its Secret, rotated before it
// expires, the previous one kept while a consumer still uses it.
package keystoneapplicationcredential
