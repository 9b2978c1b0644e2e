// Package functional tests the operator on a real kube-apiserver and etcd (envtest) with Ginkgo.
package functional
