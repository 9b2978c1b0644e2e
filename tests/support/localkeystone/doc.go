// Package localkeystone runs Debian's MariaDB, memcached and Keystone as processes on 127.0.0.1, for tests and the demo.
package localkeystone
