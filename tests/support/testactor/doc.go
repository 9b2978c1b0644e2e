// Package testactor plays, on a test control plane without them, the controllers a
// KeystoneAPI depends on: mariadb-operator (MariaDBDatabase and MariaDBAccount Ready),
// the Job controller (every Job succeeds) and the Deployment controller with the
// kubelet (every replica of the current spec ready), and infra-operator's TransportURL
// (Ready, with the Secret of a RabbitMQ URL nothing listens on). Each dependency is made
// ready the instant it appears, in namespaces labelled Label=on only, so that tests
// elsewhere play the dependencies themselves.
package testactor
