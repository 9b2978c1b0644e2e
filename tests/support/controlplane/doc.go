// Package controlplane starts a local kube-apiserver and etcd (envtest) with the operator's and its dependencies' CRDs installed.
package controlplane
