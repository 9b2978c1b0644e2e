// Package deploy builds what a KeystoneAPI deploys (names and labels, configuration, keys, jobs, services, deployment) as pure functions of its spec.
package deploy
