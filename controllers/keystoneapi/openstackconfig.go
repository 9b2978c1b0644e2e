package keystoneapi

import (
	"context"
	"fmt"
	"maps"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/internal/reconciler"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// reconcileOpenStackConfig marks OpenStackConfigReady: the ConfigMap openstack-config
// (clouds.yaml, no password) and the Secret openstack-config-secret (secure.yaml and
// cloudrc with the admin's password) describe the admin's cloud at the public
// endpoint, for openstackclient.
// While an earlier step is not True they are observed as written before.
func (r *Reconciler) reconcileOpenStackConfig(ctx context.Context, s *scope) (ctrl.Result, error) {
	api := s.api
	step := keystonev1.KeystoneAPIOpenStackConfigReady
	if !s.acting(step) {
		if found, err := r.written(ctx, s,
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: deploy.OpenStackConfigName}},
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: deploy.OpenStackConfigSecretName}}); !found {
			return ctrl.Result{}, err
		}
		s.round.Apply(step, openStackConfigVerdict(api, s.afterwards(step)))
		return ctrl.Result{}, nil
	}
	authURL := api.Status.APIEndpoints[keystonev1.EndpointPublic]
	public, err := deploy.OpenStackConfig(api, authURL)
	if err == nil {
		var private map[string]string
		if private, err = deploy.OpenStackConfigSecret(api, authURL, s.adminPassword); err == nil {
			err = r.writeOpenStackConfig(ctx, api, public, private)
		}
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	s.round.Apply(step, openStackConfigVerdict(api, ""))
	return ctrl.Result{}, nil
}

func (r *Reconciler) writeOpenStackConfig(ctx context.Context, api *keystonev1.KeystoneAPI, public, private map[string]string) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: deploy.OpenStackConfigName, Namespace: api.Namespace}}
	if _, err := reconciler.CreateOrPatch(ctx, r.Client, cm, func() error {
		cm.Labels = deploy.MergeLabels(cm.Labels, deploy.Labels(api))
		if !maps.Equal(cm.Data, public) {
			cm.Data = public
		}
		return controllerutil.SetControllerReference(api, cm, r.Scheme())
	}); err != nil {
		return fmt.Errorf("writing ConfigMap %s: %w", cm.Name, err)
	}
	_, err := r.writeSecret(ctx, api, deploy.OpenStackConfigSecretName, private)
	return err
}

// openStackConfigVerdict is OpenStackConfigReady once openstack-config and its Secret
// describe the admin's cloud (while an earlier step is not True, waiting says when they
// are written again); what keeps them from being written is an error, retried.
func openStackConfigVerdict(api *keystonev1.KeystoneAPI, waiting string) condition.Verdict {
	if waiting != "" {
		return condition.TrueVerdict("ConfigMap %s and Secret %s as written before %s", deploy.OpenStackConfigName,
			deploy.OpenStackConfigSecretName, waiting)
	}
	return condition.TrueVerdict("ConfigMap %s and Secret %s hold the cloud %q of user %s", deploy.OpenStackConfigName,
		deploy.OpenStackConfigSecretName, deploy.CloudName, api.Spec.AdminUser)
}
