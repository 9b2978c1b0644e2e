// Package benchcluster connects the benchmarks with real pods to the local cluster their make target started.
package benchcluster
