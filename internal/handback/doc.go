// Package handback hands a namespace back to keystone-operator once this suite is stopped: it removes this suite's finalizers and annotations and puts keystone-operator's own finalizers where its controllers keep them.
package handback
