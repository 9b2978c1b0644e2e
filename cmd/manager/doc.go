// Package manager builds the operator's controller manager, shared by the binary, `make run` and the tests.
package manager
