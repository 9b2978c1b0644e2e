package manager

import (
	"context"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"os"
	"strings"
	"time"

	"github.com/keystone-stepwise/keystone-operator/internal/permissions"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// clusterIdentityWait bounds how long a read of the identity that fails is tried again.
const clusterIdentityWait = 30 * time.Second

// IdentitySource is where ClusterIdentity reads and keeps the cluster's identity.
type IdentitySource struct {
	// Reader reads the API server itself; Writer creates identity.ClusterConfigMap.
	Reader client.Reader
	Writer client.Writer
	// Namespace is the operator's, which holds identity.ClusterConfigMap; "" when unknown
	// (run outside a cluster without a lease namespace).
	Namespace string
	// Rules say what the operator may do there (and cluster-wide).
	Rules permissions.Rules
}

// ClusterIdentity names this cluster in the marks of what it registers in Keystone.
// It is kept in identity.ClusterConfigMap of the operator's namespace, made once: with the UID
// of the kube-system namespace where the operator may read it (what earlier versions
// named the cluster by, so no mark becomes another cluster's at the upgrade), else a new
// random one (openstack-operator's RBAC grants ConfigMaps, not namespaces). Nothing is
// asked that the rules refuse. Without the namespace, or where the ConfigMap can be
// neither read nor made, it is the kube-system UID, or "" when that is unreadable too:
// then no predecessor's registration is claimed, and no mark naming a cluster is
// rewritten without it (identity.classify), so marks never flip between restarts. A
// read that fails for a while (the API server busy) is tried again for
// clusterIdentityWait; a refusal is final.
func ClusterIdentity(ctx context.Context, src IdentitySource) string {
	if id := src.kept(ctx); id != "" {
		return id
	}
	kubeSystem := src.kubeSystemUID(ctx)
	if src.Namespace == "" || !src.Rules.Allows("create", "", "configmaps") {
		if kubeSystem == "" {
			ctrl.Log.WithName("setup").Info("the cluster's identity is unknown: marks in Keystone name no cluster, and no " +
				"registration of a deleted object of the same name is claimed; run the operator in a namespace where it may " +
				"create ConfigMaps, or give --cluster-id")
		}
		return kubeSystem
	}
	id := kubeSystem
	if id == "" {
		id = string(uuid.NewUUID())
	}
	if kept := src.keep(ctx, id); kept != "" {
		return kept
	}
	return kubeSystem
}

// key is identity.ClusterConfigMap's key.
func (src IdentitySource) key() client.ObjectKey {
	return client.ObjectKey{Namespace: src.Namespace, Name: identity.ClusterConfigMap}
}

// kept is the identity identity.ClusterConfigMap holds; "" when there is none, or it may not be read.
func (src IdentitySource) kept(ctx context.Context) string {
	if src.Namespace == "" || !src.Rules.Allows("get", "", "configmaps") {
		return ""
	}
	cm := &corev1.ConfigMap{}
	err := readRetrying(ctx, func(ctx context.Context) error { return src.Reader.Get(ctx, src.key(), cm) })
	if err != nil && !apierrors.IsNotFound(err) {
		ctrl.Log.WithName("setup").Info("the cluster's identity cannot be read", "configmap", src.key().String(), "error", err.Error())
	}
	return cm.Data[identity.ClusterKey]
}

// kubeSystemUID is the UID of the kube-system namespace; "" when it may not be read.
func (src IdentitySource) kubeSystemUID(ctx context.Context) string {
	if !src.Rules.Allows("get", "", "namespaces", metav1.NamespaceSystem) {
		return ""
	}
	n := &corev1.Namespace{}
	err := readRetrying(ctx, func(ctx context.Context) error {
		return src.Reader.Get(ctx, client.ObjectKey{Name: metav1.NamespaceSystem}, n)
	})
	if err != nil {
		ctrl.Log.WithName("setup").Info("the kube-system namespace cannot be read", "error", err.Error())
		return ""
	}
	return string(n.UID)
}

// keep makes identity.ClusterConfigMap with id and returns the identity it holds: id, or the one
// another replica made meanwhile; "" when it cannot be made.
func (src IdentitySource) keep(ctx context.Context, id string) string {
	log := ctrl.Log.WithName("setup")
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: src.Namespace, Name: identity.ClusterConfigMap,
			Labels: map[string]string{"app.kubernetes.io/part-of": "keystone-operator"},
			Annotations: map[string]string{"keystone.openstack.org/about": "The name this cluster goes by in the marks of what " +
				"the Keystone operator registers in Keystone. Deleting it makes every registration of this cluster another's."}},
		Data: map[string]string{identity.ClusterKey: id},
	}
	err := src.Writer.Create(ctx, cm)
	if apierrors.IsAlreadyExists(err) {
		// Made meanwhile by another replica: its identity is the cluster's.
		if made := src.kept(ctx); made != "" {
			return made
		}
	}
	if err != nil {
		log.Info("the cluster's identity cannot be kept", "configmap", src.key().String(), "error", err.Error())
		return ""
	}
	log.Info("the cluster's identity is made", "configmap", src.key().String(), "identity", id)
	return id
}

// readRetrying runs read until it succeeds, is refused (forbidden, unauthorized, not
// found: final answers) or clusterIdentityWait has passed; it returns the last error.
func readRetrying(ctx context.Context, read func(context.Context) error) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, time.Second, clusterIdentityWait, true, func(ctx context.Context) (bool, error) {
		last = read(ctx)
		switch {
		case last == nil:
			return true, nil
		case apierrors.IsForbidden(last) || apierrors.IsUnauthorized(last) || apierrors.IsNotFound(last):
			return false, last
		}
		return false, nil
	})
	if err != nil && last == nil {
		last = err
	}
	return last
}

// serviceAccountNamespace is the file that names the namespace of a pod's ServiceAccount.
var serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// operatorNamespace is the operator's namespace: the lease namespace when given, else
// the pod's (its ServiceAccount's), else "" (run outside a cluster).
func operatorNamespace(opts Options) string {
	if opts.LeaderElectionNamespace != "" {
		return opts.LeaderElectionNamespace
	}
	if data, err := os.ReadFile(serviceAccountNamespace); err == nil {
		return strings.TrimSpace(string(data))
	}
	return ""
}

// identityOf is ClusterIdentity for the manager: read and kept through the API server,
// with the rules reviewed in the operator's namespace.
func identityOf(ctx context.Context, mgr ctrl.Manager, rules permissions.Rules, namespace string) string {
	if namespace != "" {
		if r, _, err := permissions.Review(ctx, mgr.GetClient(), namespace); err == nil && r.Known() {
			rules = r
		}
	}
	return ClusterIdentity(ctx, IdentitySource{Reader: mgr.GetAPIReader(), Writer: mgr.GetClient(), Namespace: namespace, Rules: rules})
}
