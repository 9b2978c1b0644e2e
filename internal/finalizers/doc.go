// Package finalizers adds and removes finalizers with a patch of the finalizer list alone.
package finalizers
