package keystoneapi

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestCronJobVerdict(t *testing.T) {
	last := metav1.NewTime(time.Date(2026, 11, 25, 1, 0, 0, 0, time.UTC))
	cron := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "keystone-cron"},
		Spec: batchv1.CronJobSpec{Schedule: "1 * * * *", Suspend: ptr.To(true)}, Status: batchv1.CronJobStatus{LastSuccessfulTime: &last}}
	g := NewWithT(t)
	g.Expect(brief(cronJobVerdict("trustFlushSchedule: bad", nil, ""))).To(Equal(verdictOf{false, "InvalidInput", lc.SeverityError,
		"trustFlushSchedule: bad"}))
	g.Expect(brief(cronJobVerdict("", cron, ""))).To(Equal(verdictOf{true, "", "",
		`cronjob keystone-cron runs keystone-manage trust_flush on schedule "1 * * * *" (suspended); last success at 2026-11-25T01:00:00Z`}))
	g.Expect(brief(cronJobVerdict("", &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "keystone-cron"},
		Spec: batchv1.CronJobSpec{Schedule: "1 * * * *"}}, "(updated once DBSyncReady is True)"))).To(Equal(verdictOf{true, "", "",
		`cronjob keystone-cron runs keystone-manage trust_flush on schedule "1 * * * *" (updated once DBSyncReady is True)`}))
}
