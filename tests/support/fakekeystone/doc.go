// Package fakekeystone is an in-memory Keystone (identity v3) HTTP server for tests, with fault injection.
package fakekeystone
