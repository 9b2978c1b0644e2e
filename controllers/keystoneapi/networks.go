package keystoneapi

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	"github.com/openstack-k8s-operators/lib-common/modules/common/networkattachment"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// NetworkRecheckInterval is how soon missing NetworkAttachmentDefinitions and the
// pods' network status are looked at again: they are read, not watched (Multus's kind
// may not be installed at all).
const NetworkRecheckInterval = 10 * time.Second

var nadKind = schema.GroupVersionKind{Group: "k8s.cni.cncf.io", Version: "v1", Kind: "NetworkAttachmentDefinition"}

// missingNetworks returns the networkAttachments that have no NetworkAttachmentDefinition
// in the namespace, read from the API server (no informer: the kind may not exist).
func (r *Reconciler) missingNetworks(ctx context.Context, api *keystonev1.KeystoneAPI) ([]string, error) {
	var missing []string
	for _, name := range api.Spec.NetworkAttachments {
		nad := &unstructured.Unstructured{}
		nad.SetGroupVersionKind(nadKind)
		err := r.Reporter.Reader.Get(ctx, client.ObjectKey{Namespace: api.Namespace, Name: name}, nad)
		switch {
		case apierrors.IsNotFound(err) || apimeta.IsNoMatchError(err):
			missing = append(missing, name)
		case err != nil:
			return nil, fmt.Errorf("reading NetworkAttachmentDefinition %s: %w", name, err)
		}
	}
	return missing, nil
}

// reconcileNetworks marks NetworkAttachmentsReady: every pod of the Deployment reports
// an address on each of networkAttachments (Multus's network-status annotation), and
// status.networkAttachments lists them.
func (r *Reconciler) reconcileNetworks(ctx context.Context, s *scope) (ctrl.Result, error) {
	api := s.api
	step := keystonev1.KeystoneAPINetworkAttachmentsReady
	// Pods are not cached (a cluster holds many). ResourceVersion 0 lets the API server
	// answer from its watch cache, milliseconds behind etcd, instead of making the list
	// consistent first (BENCHMARKS.md, time to Ready with every optional step, measures
	// the difference); the step is observed again on every change of the Deployment and
	// every NetworkRecheckInterval while it is not True.
	pods := &corev1.PodList{}
	if err := r.Reporter.Reader.List(ctx, pods, client.InNamespace(api.Namespace), client.MatchingLabels(deploy.Labels(api)),
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: "0"}}); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing Keystone's pods: %w", err)
	}
	v, attached := networksVerdict(api.Namespace, api.Spec.NetworkAttachments, pods.Items)
	if attached != nil {
		api.Status.NetworkAttachments = attached
	}
	if s.round.Apply(step, v); !v.True {
		return ctrl.Result{RequeueAfter: NetworkRecheckInterval}, nil
	}
	return ctrl.Result{}, nil
}

// attachmentsMissingVerdict is DeploymentReady while NetworkAttachmentDefinitions the
// spec names do not exist (missing): DependencyNotFound (Warning), the Deployment left
// as it is.
func attachmentsMissingVerdict(missing []string) condition.Verdict {
	return condition.FalseVerdict(condition.DependencyNotFound, "NetworkAttachmentDefinition %s not found (networkAttachments)",
		strings.Join(missing, ", "))
}

// networksVerdict is NetworkAttachmentsReady from Keystone's pods: True once every pod
// reports an address on each of attachments in Multus's network-status annotation;
// Requested (Info) while some do not; ServiceUnavailable (Warning) for an annotation
// that cannot be read. It also returns status.networkAttachments, the addresses per
// "namespace/attachment", sorted (nil when an annotation cannot be read).
func networksVerdict(namespace string, attachments []string, pods []corev1.Pod) (condition.Verdict, map[string][]string) {
	addresses := map[string][]string{}
	for i := range pods {
		status, err := networkattachment.GetNetworkStatusFromAnnotation(pods[i].Annotations)
		if err != nil {
			return condition.FalseVerdict(condition.ServiceUnavailable, "pod %s: %v", pods[i].Name, err), nil
		}
		for _, st := range status {
			addresses[st.Name] = append(addresses[st.Name], st.IPs...)
		}
	}
	attached := map[string][]string{}
	var short []string
	for _, name := range attachments {
		key := namespace + "/" + name
		ips := addresses[key]
		slices.Sort(ips)
		attached[key] = ips
		if len(ips) < len(pods) {
			short = append(short, fmt.Sprintf("%s (%d of %d pods)", name, len(ips), len(pods)))
		}
	}
	if len(short) > 0 {
		return condition.FalseVerdict(condition.Requested, "pods without an address on %s", strings.Join(short, ", ")), attached
	}
	return condition.TrueVerdict("%d pods attached to %s", len(pods), strings.Join(attachments, ", ")), attached
}
