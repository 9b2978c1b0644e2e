// Package keystoneapi reconciles KeystoneAPI objects into a running Keystone, one condition per step.
//
// Each step's phase is in the file named after the step (controller.go lists them),
// and beside it the step's decision: a pure function from what the phase observed to
// the step's verdict, covered reason by reason in status_test.go.
package keystoneapi
