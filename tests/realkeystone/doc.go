// Package realkeystone tests what the operator renders and generates against Debian's real Keystone, MariaDB and memcached.
package realkeystone
