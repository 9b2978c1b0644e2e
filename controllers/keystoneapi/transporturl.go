package keystoneapi

import (
	"context"
	"fmt"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/internal/reconciler"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	rabbitmqv1 "github.com/openstack-k8s-operators/infra-operator/apis/rabbitmq/v1beta1"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// Keys of the Secret infra-operator writes for a TransportURL.
const (
	transportURLKey = "transport_url"
	quorumQueuesKey = "quorumqueues"
)

// SecretRecheckInterval is how soon a KeystoneAPI looks again for the Secret its
// TransportURL names and the cache lacks. The Secret's own event wakes it by name
// (inputSecrets, from status.transportURLSecret), unless that event reached the cache
// before the status that names it: infra-operator writes the Secret just before the
// TransportURL's status, and this look is what is left then.
const SecretRecheckInterval = 5 * time.Second

// TransportURLName is the TransportURL of a KeystoneAPI's notifications, named as
// keystone-operator names it.
func TransportURLName(api *keystonev1.KeystoneAPI) string { return api.Name + "-keystone-transport" }

// reconcileNotifications marks RabbitMqTransportURLReady: it owns a TransportURL for
// the notifications' cluster, user and vhost (keystone-operator's default cluster when
// the spec names none), mirrors its Ready, and reads the URL from the Secret
// infra-operator writes (status.transportURLSecret).
func (r *Reconciler) reconcileNotifications(ctx context.Context, s *scope) (ctrl.Result, error) {
	api := s.api
	step := keystonev1.KeystoneAPIRabbitMqTransportURLReady
	tu := &rabbitmqv1.TransportURL{}
	tu.Name, tu.Namespace = TransportURLName(api), api.Namespace
	if !s.acting(step) {
		if found, err := r.written(ctx, s, tu); !found {
			return ctrl.Result{}, err
		}
	} else if _, err := reconciler.CreateOrPatch(ctx, r.Client, tu, func() error {
		tu.Labels = deploy.MergeLabels(tu.Labels, deploy.Labels(api))
		tu.Spec.RabbitmqClusterName = api.NotificationsCluster()
		tu.Spec.Username, tu.Spec.Vhost = "", ""
		if bus := api.Spec.NotificationsBus; bus != nil {
			tu.Spec.Username, tu.Spec.Vhost = bus.User, bus.Vhost
		}
		return controllerutil.SetControllerReference(api, tu, r.Scheme())
	}); err != nil {
		return ctrl.Result{}, fmt.Errorf("ensuring TransportURL %s: %w", tu.Name, err)
	}
	var secret *corev1.Secret
	var problem string
	if tu.Status.SecretName != "" {
		// Recorded before the Secret is found, as keystone-operator does: the Secret's
		// events wake this KeystoneAPI by that name.
		api.Status.TransportURLSecret = tu.Status.SecretName
		var err error
		if secret, problem, err = r.secretWithKeys(ctx, api.Namespace, tu.Status.SecretName, transportURLKey); err != nil {
			return ctrl.Result{}, err
		}
	}
	v := transportURLVerdict(tu, api.NotificationsCluster(), problem)
	if s.round.Apply(step, v); !v.True {
		if problem != "" {
			return ctrl.Result{RequeueAfter: SecretRecheckInterval}, nil
		}
		return ctrl.Result{}, nil
	}
	s.transportURL = string(secret.Data[transportURLKey])
	s.quorumQueues = string(secret.Data[quorumQueuesKey]) == "true"
	return ctrl.Result{}, nil
}

// transportURLVerdict is RabbitMqTransportURLReady from the TransportURL of the
// notifications to cluster and secretProblem (what is wrong with the Secret it names, ""
// for nothing): its Ready mirrored, then its Secret waited for (Requested), then
// DependencyNotFound while the Secret lacks the URL.
func transportURLVerdict(tu *rabbitmqv1.TransportURL, cluster, secretProblem string) condition.Verdict {
	switch v := condition.Mirror("TransportURL", condition.Of(tu.Name, tu.Status.Conditions)); {
	case !v.True:
		return v
	case tu.Status.SecretName == "":
		return condition.FalseVerdict(condition.Requested, "TransportURL %s: waiting for its secret", tu.Name)
	case secretProblem != "":
		return condition.FalseVerdict(condition.DependencyNotFound, "TransportURL %s: %s", tu.Name, secretProblem)
	}
	return condition.TrueVerdict("notifications go to RabbitMQ cluster %s through TransportURL %s", cluster, tu.Name)
}
