// Package testutil holds what the tests and the benchmarks share: a counter of API writes at the wire, a clock tests can move, certificates, and what the decisions' table tests compare of a verdict.
package testutil
