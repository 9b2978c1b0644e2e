// Command actor plays mariadb-operator and infra-operator on the local cluster for the
// end-to-end scenarios (make e2e), which this suite does not ship. It is honest about
// it: the servers are real pods and the status it writes is only ever the truth.
//
//   - A MariaDBDatabase labelled dbName=<instance> gets a real MariaDB pod for that
//     instance (Deployment mariadb-<instance>, Service <instance> with the labels
//     mariadb-operator gives a Galera Service); the actor creates the database in it,
//     then marks it Ready. Deleting the MariaDBDatabase drops the database.
//   - A MariaDBAccount (label mariaDBDatabaseName) gets its user, with the password of
//     its Secret, granted that database; a changed password is applied. Deleting it
//     drops the user.
//   - A Memcached gets a real memcached pod (spec.containerImage) and Service; it is
//     Ready with that server.
//   - A TransportURL gets a real RabbitMQ pod for its cluster (Deployment
//     <cluster>-server, Service <cluster>, user and password in Secret
//     <cluster>-default-user, as rabbitmq's cluster operator names them) and the Secret
//     infra-operator writes (rabbitmq-transport-url-<name>, key transport_url); it is
//     Ready once RabbitMQ accepts connections. Only the cluster's default user and vhost
//     are played: a TransportURL naming another user or vhost is False, saying so.
//   - Multus: a pod asking for networks (annotation k8s.v1.cni.cncf.io/networks) gets, once
//     it has its IP, the k8s.v1.cni.cncf.io/network-status Multus would write: the pod
//     network, and one entry per requested network whose NetworkAttachmentDefinition
//     exists. The local cluster has one bridge and no Multus: those entries carry an
//     address made from the pod's (192.0.2.<last octet>, a documentation range), and no
//     second interface exists.
//
// The actor runs on the host, beside the operator, and reaches MariaDB through the
// Service's cluster IP (kube-proxy's rules apply to the host too).
package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	memcachedv1 "github.com/openstack-k8s-operators/infra-operator/apis/memcached/v1beta1"
	rabbitmqv1 "github.com/openstack-k8s-operators/infra-operator/apis/rabbitmq/v1beta1"
	"github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	mariadbv1 "github.com/openstack-k8s-operators/mariadb-operator/api/v1beta1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

const (
	finalizer     = "e2e-actor.keystone-stepwise.dev/cleanup"
	rootSecretKey = "root-password"
	retry         = time.Second
)

// The images of the servers the actor runs: no Galera or RabbitMq spec names one here.
var (
	mariadbImage  = "localhost/keystone-stepwise/mariadb:bookworm"
	rabbitmqImage = "localhost/keystone-stepwise/rabbitmq:bookworm"
)

func main() {
	flag.StringVar(&mariadbImage, "mariadb-image", mariadbImage, "Image of the MariaDB pods.")
	flag.StringVar(&rabbitmqImage, "rabbitmq-image", rabbitmqImage, "Image of the RabbitMQ pods.")
	opts := zap.Options{Development: true}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "actor:", err)
		os.Exit(1)
	}
}

func run() error {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(mariadbv1.AddToScheme(scheme))
	utilruntime.Must(memcachedv1.AddToScheme(scheme))
	utilruntime.Must(rabbitmqv1.AddToScheme(scheme))
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{Scheme: scheme,
		Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		return err
	}
	a := &actor{Client: mgr.GetClient()}
	if err := ctrl.NewControllerManagedBy(mgr).Named("mariadbdatabase").For(&mariadbv1.MariaDBDatabase{}).
		Owns(&appsv1.Deployment{}).Complete(reconcile.Func(a.database)); err != nil {
		return err
	}
	secretToAccounts := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
		accounts := &mariadbv1.MariaDBAccountList{}
		if err := a.List(ctx, accounts, client.InNamespace(o.GetNamespace())); err != nil {
			return nil
		}
		var out []reconcile.Request
		for _, acc := range accounts.Items {
			if acc.Spec.Secret == o.GetName() {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&acc)})
			}
		}
		return out
	})
	if err := ctrl.NewControllerManagedBy(mgr).Named("mariadbaccount").For(&mariadbv1.MariaDBAccount{}).
		Watches(&corev1.Secret{}, secretToAccounts).Complete(reconcile.Func(a.account)); err != nil {
		return err
	}
	if err := ctrl.NewControllerManagedBy(mgr).Named("memcached").For(&memcachedv1.Memcached{}).
		Owns(&appsv1.Deployment{}).Complete(reconcile.Func(a.memcached)); err != nil {
		return err
	}
	if err := ctrl.NewControllerManagedBy(mgr).Named("transporturl").For(&rabbitmqv1.TransportURL{}).
		Owns(&corev1.Secret{}).Complete(reconcile.Func(a.transportURL)); err != nil {
		return err
	}
	if err := ctrl.NewControllerManagedBy(mgr).Named("multus").For(&corev1.Pod{},
		builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetAnnotations()[networksAnnotation] != ""
		}))).Complete(reconcile.Func(a.multus)); err != nil {
		return err
	}
	return mgr.Start(ctrl.SetupSignalHandler())
}

type actor struct{ client.Client }

// Multus's pod annotations.
const (
	networksAnnotation      = "k8s.v1.cni.cncf.io/networks"
	networkStatusAnnotation = "k8s.v1.cni.cncf.io/network-status"
)

var nadGVK = schema.GroupVersionKind{Group: "k8s.cni.cncf.io", Version: "v1", Kind: "NetworkAttachmentDefinition"}

// multus writes the network status of a pod that asked for networks (see the package
// comment: the attachments are played, not made).
func (a *actor) multus(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pod := &corev1.Pod{}
	if err := a.Get(ctx, req.NamespacedName, pod); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if pod.Status.PodIP == "" || pod.Annotations[networkStatusAnnotation] != "" {
		return reconcile.Result{}, nil
	}
	var requested []struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
		Interface string `json:"interface"`
	}
	if err := json.Unmarshal([]byte(pod.Annotations[networksAnnotation]), &requested); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "pod's networks annotation is not Multus's JSON list", "pod", req.NamespacedName)
		return reconcile.Result{}, nil
	}
	octet := pod.Status.PodIP[strings.LastIndex(pod.Status.PodIP, ".")+1:]
	status := []map[string]any{{"name": "local-bridge", "interface": "eth0", "ips": []string{pod.Status.PodIP}, "default": true}}
	for _, n := range requested {
		ns := n.Namespace
		if ns == "" {
			ns = pod.Namespace
		}
		nad := &unstructured.Unstructured{}
		nad.SetGroupVersionKind(nadGVK)
		if err := a.Get(ctx, client.ObjectKey{Namespace: ns, Name: n.Name}, nad); err != nil {
			// Multus leaves a pod whose definition is missing without a sandbox; retried.
			return reconcile.Result{RequeueAfter: retry}, client.IgnoreNotFound(err)
		}
		status = append(status, map[string]any{"name": ns + "/" + n.Name, "interface": n.Interface,
			"ips": []string{"192.0.2." + octet}})
	}
	data, err := json.Marshal(status)
	if err != nil {
		return reconcile.Result{}, err
	}
	patch := client.MergeFrom(pod.DeepCopy())
	pod.Annotations[networkStatusAnnotation] = string(data)
	return reconcile.Result{}, client.IgnoreNotFound(a.Patch(ctx, pod, patch))
}

// database creates the instance's server and the database, and drops it on deletion.
func (a *actor) database(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	db := &mariadbv1.MariaDBDatabase{}
	if err := a.Get(ctx, req.NamespacedName, db); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	instance := db.Labels["dbName"]
	if instance == "" {
		return reconcile.Result{}, a.setReady(ctx, db, &db.Status.Conditions, mariadbv1.MariaDBDatabaseReadyCondition, errors.New("label dbName (the database instance) is missing"))
	}
	if !db.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, a.release(ctx, db, func() error {
			return a.exec(ctx, db.Namespace, instance, fmt.Sprintf("DROP DATABASE IF EXISTS %s", ident(db.Spec.Name)))
		}, nil)
	}
	if err := a.addFinalizer(ctx, db); err != nil {
		return reconcile.Result{}, err
	}
	if err := a.ensureMariaDB(ctx, db.Namespace, instance); err != nil {
		return reconcile.Result{}, err
	}
	err := a.exec(ctx, db.Namespace, instance, fmt.Sprintf("CREATE DATABASE IF NOT EXISTS %s CHARACTER SET utf8mb4", ident(db.Spec.Name)))
	db.Status.Completed = err == nil
	return requeueUnless(err), a.setReady(ctx, db, &db.Status.Conditions, mariadbv1.MariaDBDatabaseReadyCondition, err)
}

// requeueUnless retries in a second while a server is not there yet.
func requeueUnless(err error) reconcile.Result {
	if err != nil {
		return reconcile.Result{RequeueAfter: retry}
	}
	return reconcile.Result{}
}

// account creates the user with its Secret's password on its database; it drops the
// user on deletion.
func (a *actor) account(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	acc := &mariadbv1.MariaDBAccount{}
	if err := a.Get(ctx, req.NamespacedName, acc); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	db := &mariadbv1.MariaDBDatabase{}
	dbName := acc.Labels["mariaDBDatabaseName"]
	err := a.Get(ctx, types.NamespacedName{Namespace: acc.Namespace, Name: dbName}, db)
	if !acc.DeletionTimestamp.IsZero() {
		if err != nil {
			// Without its database, the account's server is unknown: nothing to drop.
			return reconcile.Result{}, a.release(ctx, acc, func() error { return client.IgnoreNotFound(err) }, nil)
		}
		return reconcile.Result{}, a.release(ctx, acc, func() error {
			return a.exec(ctx, acc.Namespace, db.Labels["dbName"], fmt.Sprintf("DROP USER IF EXISTS %s@'%%'", quote(acc.Spec.UserName)))
		}, func() error {
			// Then the database may go (mariadb-operator's reconcileDelete: the user
			// dropped, or the namespace going with its server, its finalizer off the
			// MariaDBDatabase before the account's own).
			if controllerutil.RemoveFinalizer(db, accountFinalizer(acc)) {
				return client.IgnoreNotFound(a.Update(ctx, db))
			}
			return nil
		})
	}
	if err != nil {
		return reconcile.Result{RequeueAfter: retry}, a.setReady(ctx, acc, &acc.Status.Conditions, mariadbv1.MariaDBAccountReadyCondition,
			fmt.Errorf("MariaDBDatabase %q (label mariaDBDatabaseName): %w", dbName, err))
	}
	if !db.Status.Conditions.IsTrue(condition.ReadyCondition) {
		return reconcile.Result{RequeueAfter: retry}, a.setReady(ctx, acc, &acc.Status.Conditions, mariadbv1.MariaDBAccountReadyCondition,
			fmt.Errorf("MariaDBDatabase %s is not ready yet", dbName))
	}
	secret := &corev1.Secret{}
	if err := a.Get(ctx, types.NamespacedName{Namespace: acc.Namespace, Name: acc.Spec.Secret}, secret); err != nil {
		return reconcile.Result{RequeueAfter: retry}, a.setReady(ctx, acc, &acc.Status.Conditions, mariadbv1.MariaDBAccountReadyCondition, err)
	}
	password, ok := secret.Data[mariadbv1.DatabasePasswordSelector]
	if !ok {
		return reconcile.Result{}, a.setReady(ctx, acc, &acc.Status.Conditions, mariadbv1.MariaDBAccountReadyCondition,
			fmt.Errorf("secret %s has no key %s", secret.Name, mariadbv1.DatabasePasswordSelector))
	}
	if err := a.addFinalizer(ctx, acc); err != nil {
		return reconcile.Result{}, err
	}
	// As mariadb-operator holds an account's database until the account's user is
	// dropped: deleted together, the database cannot go first and leave the user behind.
	if controllerutil.AddFinalizer(db, accountFinalizer(acc)) {
		if err := a.Update(ctx, db); err != nil {
			return reconcile.Result{}, err
		}
	}
	user := quote(acc.Spec.UserName) + "@'%'"
	err = a.exec(ctx, acc.Namespace, db.Labels["dbName"],
		fmt.Sprintf("CREATE USER IF NOT EXISTS %s IDENTIFIED BY %s", user, quote(string(password))),
		fmt.Sprintf("ALTER USER %s IDENTIFIED BY %s", user, quote(string(password))),
		fmt.Sprintf("GRANT ALL PRIVILEGES ON %s.* TO %s", ident(db.Spec.Name), user))
	if err == nil {
		acc.Status.CurrentSecret = acc.Spec.Secret
	}
	return requeueUnless(err), a.setReady(ctx, acc, &acc.Status.Conditions, mariadbv1.MariaDBAccountReadyCondition, err)
}

// memcached runs a memcached pod and reports its server once it is available.
func (a *actor) memcached(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	mc := &memcachedv1.Memcached{}
	if err := a.Get(ctx, req.NamespacedName, mc); err != nil || !mc.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	labels := map[string]string{"app": "memcached", "cr": "memcached-" + mc.Name}
	dep := server(mc.Namespace, mc.Name, labels, memcachedUID, corev1.Container{
		Name: "memcached", Image: mc.Spec.ContainerImage, ImagePullPolicy: corev1.PullIfNotPresent,
		Ports:          []corev1.ContainerPort{{ContainerPort: 11211}},
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(11211)}}, PeriodSeconds: 1},
	})
	if err := a.ensure(ctx, mc, dep, service(mc.Namespace, mc.Name, labels, 11211)); err != nil {
		return reconcile.Result{}, err
	}
	server := fmt.Sprintf("%s.%s.svc:11211", mc.Name, mc.Namespace)
	var err error
	if dep.Status.AvailableReplicas < 1 {
		err = fmt.Errorf("waiting for deployment %s", dep.Name)
		mc.Status.ServerList, mc.Status.ServerListWithInet = nil, nil
	} else {
		mc.Status.ServerList, mc.Status.ServerListWithInet = []string{server}, []string{"inet:" + server}
	}
	mc.Status.ReadyCount = dep.Status.AvailableReplicas
	mc.Status.ObservedGeneration = mc.Generation
	return reconcile.Result{}, a.setReady(ctx, mc, &mc.Status.Conditions, condition.DeploymentReadyCondition, err)
}

// transportURL runs the TransportURL's RabbitMQ and writes the Secret with the URL of
// its default user, as infra-operator does.
func (a *actor) transportURL(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	tu := &rabbitmqv1.TransportURL{}
	if err := a.Get(ctx, req.NamespacedName, tu); err != nil || !tu.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	tu.Status.ObservedGeneration = tu.Generation
	if tu.Spec.UserRef != "" || tu.Spec.Username != "" || (tu.Spec.Vhost != "" && tu.Spec.Vhost != "/") {
		return reconcile.Result{}, a.setReady(ctx, tu, &tu.Status.Conditions, rabbitmqv1.TransportURLReadyCondition,
			fmt.Errorf("the e2e actor serves only the default user and vhost / of a cluster, not user %q (userRef %q), vhost %q",
				tu.Spec.Username, tu.Spec.UserRef, tu.Spec.Vhost))
	}
	cluster := tu.Spec.RabbitmqClusterName
	user, password, err := a.ensureRabbitMQ(ctx, tu.Namespace, cluster)
	if err != nil {
		return requeueUnless(err), a.setReady(ctx, tu, &tu.Status.Conditions, rabbitmqv1.TransportURLReadyCondition, err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "rabbitmq-transport-url-" + tu.Name, Namespace: tu.Namespace}}
	if _, err := controllerutil.CreateOrUpdate(ctx, a.Client, secret, func() error {
		secret.Data = map[string][]byte{"transport_url": []byte(fmt.Sprintf("rabbit://%s:%s@%s.%s.svc:5672/?ssl=0", user, password, cluster, tu.Namespace))}
		return controllerutil.SetControllerReference(tu, secret, a.Scheme())
	}); err != nil {
		return reconcile.Result{}, err
	}
	tu.Status.SecretName = secret.Name
	tu.Status.RabbitmqClusterName, tu.Status.RabbitmqUsername, tu.Status.RabbitmqVhost = cluster, user, "/"
	return reconcile.Result{}, a.setReady(ctx, tu, &tu.Status.Conditions, rabbitmqv1.TransportURLReadyCondition, nil)
}

// ensureRabbitMQ runs the cluster's RabbitMQ pod and Service, and returns its default
// user and password once it accepts connections.
func (a *actor) ensureRabbitMQ(ctx context.Context, namespace, cluster string) (user, password string, err error) {
	secret, err := a.passwordSecret(ctx, namespace, cluster+"-default-user", "password", map[string]string{"username": "default_user"})
	if err != nil {
		return "", "", err
	}
	fromSecret := func(key string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: secret.Name}, Key: key}}
	}
	labels := map[string]string{"app.kubernetes.io/name": cluster, "app.kubernetes.io/component": "rabbitmq"}
	dep := server(namespace, cluster+"-server", labels, rabbitmqUID, corev1.Container{
		Name: "rabbitmq", Image: rabbitmqImage, ImagePullPolicy: corev1.PullNever,
		Env: []corev1.EnvVar{{Name: "RABBITMQ_DEFAULT_USER", ValueFrom: fromSecret("username")},
			{Name: "RABBITMQ_DEFAULT_PASS", ValueFrom: fromSecret("password")}},
		Ports: []corev1.ContainerPort{{ContainerPort: 5672}},
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(5672)}},
			PeriodSeconds: 1},
	})
	// Like the MariaDB server, the cluster outlives any one TransportURL.
	if err := a.ensure(ctx, nil, dep, service(namespace, cluster, labels, 5672)); err != nil {
		return "", "", err
	}
	if dep.Status.AvailableReplicas < 1 {
		return "", "", fmt.Errorf("waiting for RabbitMQ %s (deployment %s)", cluster, dep.Name)
	}
	return string(secret.Data["username"]), string(secret.Data["password"]), nil
}

// passwordSecret makes sure the Secret name holds a random password under key (made
// once, kept after), with the values of fixed beside it.
func (a *actor) passwordSecret(ctx context.Context, namespace, name, key string, fixed map[string]string) (*corev1.Secret, error) {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	_, err := controllerutil.CreateOrUpdate(ctx, a.Client, secret, func() error {
		if len(secret.Data[key]) > 0 {
			return nil
		}
		b := make([]byte, 12)
		if _, err := rand.Read(b); err != nil {
			return err
		}
		secret.Data = map[string][]byte{key: []byte(hex.EncodeToString(b))}
		for k, v := range fixed {
			secret.Data[k] = []byte(v)
		}
		return nil
	})
	return secret, err
}

// ensureMariaDB runs the instance's MariaDB pod and publishes its Service, as
// mariadb-operator does for a Galera.
func (a *actor) ensureMariaDB(ctx context.Context, namespace, instance string) error {
	secret, err := a.passwordSecret(ctx, namespace, "mariadb-"+instance+"-root", rootSecretKey, nil)
	if err != nil {
		return err
	}
	labels := map[string]string{"app": "mariadb", "cr": "mariadb-" + instance}
	dep := server(namespace, "mariadb-"+instance, labels, mysqlUID, corev1.Container{
		Name: "mariadb", Image: mariadbImage, ImagePullPolicy: corev1.PullNever,
		Env: []corev1.EnvVar{{Name: "MYSQL_ROOT_PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: secret.Name}, Key: rootSecretKey}}}},
		Ports: []corev1.ContainerPort{{ContainerPort: 3306}},
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(3306)}},
			PeriodSeconds: 1},
	})
	svc := service(namespace, instance, labels, 3306)
	// The database server outlives any one database, as a Galera does: nobody owns it,
	// and it goes with its namespace.
	if err := a.ensure(ctx, nil, dep, svc); err != nil {
		return err
	}
	if dep.Status.AvailableReplicas < 1 {
		return fmt.Errorf("waiting for MariaDB %s (deployment %s)", instance, dep.Name)
	}
	return nil
}

// exec runs statements as root on the instance's server; an error says why the
// server is not there yet or what MariaDB answered.
func (a *actor) exec(ctx context.Context, namespace, instance string, statements ...string) error {
	dep := &appsv1.Deployment{}
	if err := a.Get(ctx, types.NamespacedName{Namespace: namespace, Name: "mariadb-" + instance}, dep); err != nil {
		return fmt.Errorf("MariaDB %s: %w", instance, err)
	}
	if dep.Status.AvailableReplicas < 1 {
		return fmt.Errorf("waiting for MariaDB %s (deployment %s)", instance, dep.Name)
	}
	svc := &corev1.Service{}
	if err := a.Get(ctx, types.NamespacedName{Namespace: namespace, Name: instance}, svc); err != nil {
		return fmt.Errorf("MariaDB %s: %w", instance, err)
	}
	secret := &corev1.Secret{}
	if err := a.Get(ctx, types.NamespacedName{Namespace: namespace, Name: "mariadb-" + instance + "-root"}, secret); err != nil {
		return fmt.Errorf("MariaDB %s: %w", instance, err)
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd = "root", string(secret.Data[rootSecretKey])
	cfg.Net, cfg.Addr = "tcp", svc.Spec.ClusterIP+":3306"
	cfg.Timeout = 5 * time.Second
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	db := sql.OpenDB(conn)
	defer func() { _ = db.Close() }()
	for _, s := range statements {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("MariaDB %s: %w", instance, err)
		}
	}
	return nil
}

// ensure creates or updates the Deployment and Service, owned by owner when not nil,
// and reads the Deployment back into dep.
func (a *actor) ensure(ctx context.Context, owner client.Object, dep *appsv1.Deployment, svc *corev1.Service) error {
	for _, obj := range []client.Object{dep, svc} {
		desired := obj.DeepCopyObject().(client.Object)
		if _, err := controllerutil.CreateOrUpdate(ctx, a.Client, obj, func() error {
			switch o := obj.(type) {
			case *appsv1.Deployment:
				o.Labels, o.Spec = desired.GetLabels(), desired.(*appsv1.Deployment).Spec
			case *corev1.Service:
				d := desired.(*corev1.Service)
				o.Labels, o.Spec.Selector, o.Spec.Ports = d.Labels, d.Spec.Selector, d.Spec.Ports
			}
			if owner != nil {
				return controllerutil.SetControllerReference(owner, obj, a.Scheme())
			}
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}

// The users the servers run as, as the images make them (hack/images/*/setup, TCIB's IDs).
const (
	memcachedUID int64 = 42457
	mysqlUID     int64 = 42434
	rabbitmqUID  int64 = 42439
)

// server is a Deployment of one pod running c as uid, as Pod Security's restricted
// profile asks (the e2e namespaces enforce it): never root, no capability, no
// privilege escalation, the runtime's seccomp profile.
func server(namespace, name string, labels map[string]string, uid int64, c corev1.Container) *appsv1.Deployment {
	c.SecurityContext = &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					Containers:                    []corev1.Container{c},
					TerminationGracePeriodSeconds: ptr.To[int64](5),
					AutomountServiceAccountToken:  ptr.To(false),
					SecurityContext: &corev1.PodSecurityContext{RunAsUser: ptr.To(uid), RunAsGroup: ptr.To(uid),
						RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
				}},
		},
	}
}

func service(namespace, name string, labels map[string]string, port int32) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels},
		Spec: corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{
			Name: "server", Port: port, TargetPort: intstr.FromInt32(port), Protocol: corev1.ProtocolTCP}}},
	}
}

// setReady writes step and Ready (True, or False with cause's message) to obj's status,
// as the operator it plays does for its own step.
func (a *actor) setReady(ctx context.Context, obj client.Object, conds *condition.Conditions, step condition.Type, cause error) error {
	for _, t := range []condition.Type{step, condition.ReadyCondition} {
		if cause == nil {
			conds.Set(condition.TrueCondition(t, condition.ReadyMessage))
		} else {
			conds.Set(condition.FalseCondition(t, condition.RequestedReason, condition.SeverityInfo, "%s", cause.Error()))
		}
	}
	return a.Status().Update(ctx, obj)
}

// accountFinalizer is what an account holds its MariaDBDatabase with, named as
// mariadb-operator names it ("<its finalizer>-<account>").
func accountFinalizer(acc *mariadbv1.MariaDBAccount) string {
	return "openstack.org/mariadbaccount-" + acc.Name
}

func (a *actor) addFinalizer(ctx context.Context, obj client.Object) error {
	if controllerutil.AddFinalizer(obj, finalizer) {
		return a.Update(ctx, obj)
	}
	return nil
}

// release removes the actor's finalizer once cleanup succeeded, and then (when given)
// let, which lets go of what obj held; when the namespace is being deleted, the server
// goes with it and nothing is cleaned, but what obj held is let go.
func (a *actor) release(ctx context.Context, obj client.Object, cleanup, let func() error) error {
	if !controllerutil.ContainsFinalizer(obj, finalizer) {
		return nil
	}
	ns := &corev1.Namespace{}
	if err := a.Get(ctx, types.NamespacedName{Name: obj.GetNamespace()}, ns); err != nil {
		return err
	}
	if ns.DeletionTimestamp.IsZero() {
		if err := cleanup(); err != nil {
			return err
		}
	}
	if let != nil {
		if err := let(); err != nil {
			return err
		}
	}
	if controllerutil.RemoveFinalizer(obj, finalizer) {
		return client.IgnoreNotFound(a.Update(ctx, obj))
	}
	return nil
}

// ident quotes a MariaDB identifier, quote a string literal.
func ident(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

func quote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(s) + "'"
}
