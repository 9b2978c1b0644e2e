// Package testutil holds what the functional tests and the benchmarks share: a counter of API writes at the wire and a clock tests can move.
package testutil
