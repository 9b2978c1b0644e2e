// Command waitforservice shows how a dependent operator (glance, nova, ...) uses this
// API: it imports only keystone.openstack.org/v1beta1, waits until a KeystoneService is
// Ready for its current generation, and reads what Keystone registered.
//
//	go run ./examples/waitforservice -namespace openstack -name glance
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func main() {
	namespace := flag.String("namespace", "default", "namespace of the KeystoneService")
	name := flag.String("name", "glance", "name of the KeystoneService")
	timeout := flag.Duration("timeout", 2*time.Minute, "how long to wait")
	flag.Parse()

	scheme := runtime.NewScheme()
	if err := keystonev1.AddToScheme(scheme); err != nil {
		fail(err)
	}
	c, err := client.New(ctrl.GetConfigOrDie(), client.Options{Scheme: scheme})
	if err != nil {
		fail(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	svc, err := keystonev1.WaitForKeystoneService(ctx, c, client.ObjectKey{Namespace: *namespace, Name: *name}, time.Second)
	if err != nil {
		fail(err)
	}
	fmt.Printf("KeystoneService %s/%s is Ready: service %s\n", svc.Namespace, svc.Name, svc.Status.ServiceID)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "waitforservice:", err)
	os.Exit(1)
}
