package controlplane

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The operator's identity as config/default installs it: the ServiceAccount its
// Deployment runs as, after the overlay's namespace and name prefix.
const (
	OperatorNamespace      = "keystone-operator-system"
	OperatorServiceAccount = "keystone-stepwise-controller-manager"
)

// OperatorUser is the user name the API server gives the operator's ServiceAccount.
const OperatorUser = "system:serviceaccount:" + OperatorNamespace + ":" + OperatorServiceAccount

// rbacKinds are the kinds of a rendered overlay that grant the operator its permissions.
var rbacKinds = map[string]bool{
	"Namespace": true, "ServiceAccount": true,
	"ClusterRole": true, "ClusterRoleBinding": true, "Role": true, "RoleBinding": true,
}

// RBAC renders a kustomize overlay (config/default, config/namespaced) with kubectl
// and returns its permission objects: the namespace, the ServiceAccount, and every
// (Cluster)Role and (Cluster)RoleBinding, exactly as `kubectl apply -k` would create
// them.
func RBAC(kubectl, overlay string) ([]*unstructured.Unstructured, error) {
	out, err := exec.Command(kubectl, "kustomize", overlay).Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return nil, fmt.Errorf("kubectl kustomize %s: %w: %s", overlay, err, exit.Stderr)
		}
		return nil, fmt.Errorf("kubectl kustomize %s: %w", overlay, err)
	}
	all, err := decodeAll(out)
	if err != nil {
		return nil, fmt.Errorf("decoding what kubectl kustomize %s rendered: %w", overlay, err)
	}
	var objs []*unstructured.Unstructured
	for _, obj := range all {
		if rbacKinds[obj.GetKind()] {
			objs = append(objs, obj)
		}
	}
	return objs, nil
}

// Manifest returns the objects of a YAML file of the repository (several documents).
func Manifest(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	objs, err := decodeAll(data)
	if err != nil {
		return nil, fmt.Errorf("decoding %s: %w", path, err)
	}
	return objs, nil
}

// decodeAll decodes every document of data, YAML or JSON.
func decodeAll(data []byte) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	decoder := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := decoder.Decode(&obj.Object); errors.Is(err, io.EOF) {
			return objs, nil
		} else if err != nil {
			return nil, err
		}
		if len(obj.Object) > 0 {
			objs = append(objs, obj)
		}
	}
}

// Kubectl is the kubectl built beside envtest's binaries (KUBEBUILDER_ASSETS), or the
// one on PATH.
func Kubectl() string {
	if assets := os.Getenv("KUBEBUILDER_ASSETS"); assets != "" {
		return filepath.Join(assets, "kubectl")
	}
	return "kubectl"
}

// AsOperator installs config/default's permission objects into the cluster of admin
// (a configuration allowed to impersonate) and returns a copy of admin that acts as
// the operator's ServiceAccount: what the operator may do then is exactly what
// config/rbac grants, as in a cluster where `kubectl apply -k config/default`
// installed it.
func AsOperator(ctx context.Context, admin *rest.Config, root string) (*rest.Config, error) {
	objs, err := RBAC(Kubectl(), filepath.Join(root, "config", "default"))
	if err != nil {
		return nil, err
	}
	c, err := client.New(admin, client.Options{})
	if err != nil {
		return nil, fmt.Errorf("connecting to the API server: %w", err)
	}
	for _, obj := range objs {
		// Server-side apply: creates the object, or brings one an earlier run made in step.
		if err := c.Patch(ctx, obj, client.Apply, client.FieldOwner("keystone-operator-tests"), client.ForceOwnership); err != nil {
			return nil, fmt.Errorf("applying %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	cfg := rest.CopyConfig(admin)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: OperatorUser,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + OperatorNamespace, "system:authenticated"}}
	return cfg, nil
}

// WriteOperatorKubeconfig reads the kubeconfig at adminPath (allowed to impersonate),
// installs config/default's permission objects into its cluster (AsOperator) and
// writes to path a kubeconfig that acts as the operator's ServiceAccount.
func WriteOperatorKubeconfig(ctx context.Context, adminPath, path, root string) error {
	admin, err := clientcmd.BuildConfigFromFlags("", adminPath)
	if err != nil {
		return fmt.Errorf("reading kubeconfig %s: %w", adminPath, err)
	}
	op, err := AsOperator(ctx, admin, root)
	if err != nil {
		return err
	}
	raw, err := clientcmd.LoadFromFile(adminPath)
	if err != nil {
		return fmt.Errorf("reading kubeconfig %s: %w", adminPath, err)
	}
	for _, auth := range raw.AuthInfos {
		auth.Impersonate = op.Impersonate.UserName
		auth.ImpersonateGroups = op.Impersonate.Groups
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(path), err)
	}
	if err := clientcmd.WriteToFile(*raw, path); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return nil
}
