package keystoneapi

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/internal/reconciler"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// OverrideAnnotation records on a Service the label and annotation keys and the spec
// fields its override set, so that what is removed from the override is removed from
// the Service, and what others (a load balancer controller, an admin) set is kept.
const OverrideAnnotation = "keystone.openstack.org/override-applied"

// reconcileServices marks ExposeServiceReady (exposeVerdict): the public and internal
// Services exist, with their overrides, a LoadBalancer has its address, and
// status.apiEndpoints lists Keystone's URLs. While an earlier step is not True they are
// observed, not changed.
func (r *Reconciler) reconcileServices(ctx context.Context, s *scope) (ctrl.Result, error) {
	api := s.api
	step := keystonev1.KeystoneAPIExposeServiceReady
	if _, err := r.existingDeployment(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	services, err := s.in.Services()
	if err != nil {
		s.round.Apply(step, exposeVerdict(api, err, nil, ""))
		return ctrl.Result{}, nil
	}
	var pending []string
	for _, desired := range services {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: desired.Name, Namespace: desired.Namespace}}
		if !s.acting(step) {
			if err := r.Get(ctx, client.ObjectKeyFromObject(svc), svc); err != nil {
				return ctrl.Result{}, client.IgnoreNotFound(err)
			}
		} else if _, err := reconciler.CreateOrPatch(ctx, r.Client, svc, func() error {
			applyService(svc, desired)
			return controllerutil.SetControllerReference(api, svc, r.Scheme())
		}); err != nil {
			return ctrl.Result{}, fmt.Errorf("ensuring service %s: %w", svc.Name, err)
		}
		if svc.Spec.Type == corev1.ServiceTypeLoadBalancer && len(svc.Status.LoadBalancer.Ingress) == 0 {
			pending = append(pending, svc.Name)
		}
	}
	api.Status.APIEndpoints = deploy.Endpoints(api)
	api.Status.Region = api.Spec.Region
	waiting := ""
	if !s.acting(step) {
		waiting = s.afterwards(step)
	}
	s.round.Apply(step, exposeVerdict(api, nil, pending, waiting))
	return ctrl.Result{}, nil
}

// appliedOverride is what OverrideAnnotation records.
type appliedOverride struct {
	Labels      []string `json:"labels,omitempty"`
	Annotations []string `json:"annotations,omitempty"`
	Spec        []string `json:"spec,omitempty"`
}

// applyService makes svc hold what desired sets: its labels and annotations (removing
// the keys a previous override set and this one does not), its ports and selector, and
// the spec fields of lib-common's override (reset to the API server's default when the
// override no longer sets them). Fields others set are left alone.
func applyService(svc, desired *corev1.Service) {
	var prev appliedOverride
	_ = json.Unmarshal([]byte(svc.Annotations[OverrideAnnotation]), &prev) // unreadable: nothing to remove
	for _, k := range prev.Labels {
		if _, ok := desired.Labels[k]; !ok {
			delete(svc.Labels, k)
		}
	}
	for _, k := range prev.Annotations {
		if _, ok := desired.Annotations[k]; !ok {
			delete(svc.Annotations, k)
		}
	}
	svc.Labels = deploy.MergeLabels(svc.Labels, desired.Labels)
	svc.Annotations = deploy.MergeLabels(svc.Annotations, desired.Annotations)
	if !samePorts(desired.Spec.Ports, svc.Spec.Ports) {
		svc.Spec.Ports = desired.Spec.Ports
	}
	svc.Spec.Selector = desired.Spec.Selector
	now := appliedOverride{Labels: slices.Sorted(maps.Keys(desired.Labels)), Annotations: slices.Sorted(maps.Keys(desired.Annotations))}
	for _, f := range overridableSpec {
		set := f.set(&desired.Spec)
		if set {
			now.Spec = append(now.Spec, f.name)
		}
		if set || slices.Contains(prev.Spec, f.name) {
			f.copy(&svc.Spec, &desired.Spec)
		}
	}
	data, _ := json.Marshal(now) // a struct of string slices always encodes
	svc.Annotations[OverrideAnnotation] = string(data)
}

// specField is a field of lib-common's OverrideServiceSpec: whether desired sets it,
// and how to copy it (the zero value lets the API server default it again).
type specField struct {
	name string
	set  func(*corev1.ServiceSpec) bool
	copy func(dst, src *corev1.ServiceSpec)
}

var overridableSpec = []specField{
	{"type", func(*corev1.ServiceSpec) bool { return true }, func(d, s *corev1.ServiceSpec) { d.Type = s.Type }},
	{"sessionAffinity", func(s *corev1.ServiceSpec) bool { return s.SessionAffinity != "" },
		func(d, s *corev1.ServiceSpec) { d.SessionAffinity = s.SessionAffinity }},
	{"sessionAffinityConfig", func(s *corev1.ServiceSpec) bool { return s.SessionAffinityConfig != nil },
		func(d, s *corev1.ServiceSpec) { d.SessionAffinityConfig = s.SessionAffinityConfig }},
	{"loadBalancerSourceRanges", func(s *corev1.ServiceSpec) bool { return len(s.LoadBalancerSourceRanges) > 0 },
		func(d, s *corev1.ServiceSpec) { d.LoadBalancerSourceRanges = s.LoadBalancerSourceRanges }},
	{"externalName", func(s *corev1.ServiceSpec) bool { return s.ExternalName != "" },
		func(d, s *corev1.ServiceSpec) { d.ExternalName = s.ExternalName }},
	{"externalTrafficPolicy", func(s *corev1.ServiceSpec) bool { return s.ExternalTrafficPolicy != "" },
		func(d, s *corev1.ServiceSpec) { d.ExternalTrafficPolicy = s.ExternalTrafficPolicy }},
	{"internalTrafficPolicy", func(s *corev1.ServiceSpec) bool { return s.InternalTrafficPolicy != nil },
		func(d, s *corev1.ServiceSpec) { d.InternalTrafficPolicy = s.InternalTrafficPolicy }},
	{"ipFamilyPolicy", func(s *corev1.ServiceSpec) bool { return s.IPFamilyPolicy != nil },
		func(d, s *corev1.ServiceSpec) { d.IPFamilyPolicy = s.IPFamilyPolicy }},
	{"loadBalancerClass", func(s *corev1.ServiceSpec) bool { return s.LoadBalancerClass != nil },
		func(d, s *corev1.ServiceSpec) { d.LoadBalancerClass = s.LoadBalancerClass }},
}

// samePorts compares the fields of Service ports the operator sets (the API server
// fills others, such as a node port).
func samePorts(want, have []corev1.ServicePort) bool {
	if len(want) != len(have) {
		return false
	}
	for i := range want {
		w, h := want[i], have[i]
		if w.Name != h.Name || w.Port != h.Port || w.Protocol != h.Protocol || w.TargetPort != h.TargetPort {
			return false
		}
	}
	return true
}

// exposeVerdict is ExposeServiceReady from the Services: InvalidInput (Error) for an
// override they cannot be built from (invalid); Requested (Info) while a LoadBalancer
// has no address (pending); else True.
func exposeVerdict(api *keystonev1.KeystoneAPI, invalid error, pending []string, waiting string) condition.Verdict {
	switch {
	case invalid != nil:
		return condition.FalseVerdict(condition.InvalidInput, "%v", invalid)
	case len(pending) > 0:
		return condition.FalseVerdict(condition.Requested, "LoadBalancer service %s has no address yet", strings.Join(pending, " and "))
	}
	msg := fmt.Sprintf("services %s and %s expose port %d", deploy.ServiceName(api, keystonev1.EndpointPublic),
		deploy.ServiceName(api, keystonev1.EndpointInternal), deploy.Port)
	if waiting != "" {
		msg += " " + waiting
	}
	return condition.TrueVerdict("%s", msg)
}
