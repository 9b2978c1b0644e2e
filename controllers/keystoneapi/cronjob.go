package keystoneapi

import (
	"context"
	"fmt"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/internal/reconciler"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// reconcileTrustFlush marks CronJobReady (cronJobVerdict): the CronJob running
// keystone-manage trust_flush exists with the spec's schedule, arguments and suspension,
// and its last runs are reported. While an earlier step is not True it is observed, not
// changed.
func (r *Reconciler) reconcileTrustFlush(ctx context.Context, s *scope) (ctrl.Result, error) {
	api := s.api
	step := keystonev1.KeystoneAPICronJobReady
	cron := &batchv1.CronJob{}
	cron.Name, cron.Namespace = deploy.TrustFlushCronJobName(api), api.Namespace
	if problem := deploy.TrustFlushScheduleProblem(api); problem != "" {
		s.round.Apply(step, cronJobVerdict(problem, nil, ""))
		return ctrl.Result{}, nil
	}
	if !s.acting(step) {
		if found, err := r.written(ctx, s, cron); !found {
			return ctrl.Result{}, err
		}
		s.round.Apply(step, cronJobVerdict("", cron, s.afterwards(step)))
		return ctrl.Result{}, nil
	}
	desired, err := s.in.TrustFlushCronJob()
	if err != nil {
		return ctrl.Result{}, err
	}
	if _, err := reconciler.CreateOrPatch(ctx, r.Client, cron, func() error {
		cron.Labels = deploy.MergeLabels(cron.Labels, desired.Labels)
		cron.Spec.Schedule = desired.Spec.Schedule
		cron.Spec.Suspend = desired.Spec.Suspend
		cron.Spec.ConcurrencyPolicy = desired.Spec.ConcurrencyPolicy
		cron.Spec.SuccessfulJobsHistoryLimit = desired.Spec.SuccessfulJobsHistoryLimit
		cron.Spec.FailedJobsHistoryLimit = desired.Spec.FailedJobsHistoryLimit
		replaceTemplate(&cron.ObjectMeta, &desired.ObjectMeta, func() { cron.Spec.JobTemplate = desired.Spec.JobTemplate })
		return controllerutil.SetControllerReference(api, cron, r.Scheme())
	}); err != nil {
		return ctrl.Result{}, fmt.Errorf("ensuring cronjob %s: %w", cron.Name, err)
	}
	// Every pod template now mounts the keys Secret "keystone".
	if err := r.removeLegacyKeys(ctx, api); err != nil {
		return ctrl.Result{}, err
	}
	s.round.Apply(step, cronJobVerdict("", cron, ""))
	return ctrl.Result{}, nil
}

// cronJobVerdict is CronJobReady from the trust flush CronJob: InvalidInput (Error) for
// a schedule that problem says is wrong, else True saying what it runs, when, and
// (waiting) when it is updated again.
func cronJobVerdict(problem string, cron *batchv1.CronJob, waiting string) condition.Verdict {
	if problem != "" {
		return condition.FalseVerdict(condition.InvalidInput, "%s", problem)
	}
	msg := fmt.Sprintf("cronjob %s runs keystone-manage trust_flush on schedule %q", cron.Name, cron.Spec.Schedule)
	if ptr.Deref(cron.Spec.Suspend, false) {
		msg += " (suspended)"
	}
	if t := cron.Status.LastSuccessfulTime; t != nil {
		msg += "; last success at " + t.UTC().Format(time.RFC3339)
	}
	if waiting != "" {
		msg += " " + waiting
	}
	return condition.TrueVerdict("%s", msg)
}
