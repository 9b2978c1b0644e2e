package functional

import (
	"context"
	"time"

	"github.com/keystone-stepwise/keystone-operator/tests/support/testutil"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	memcachedv1 "github.com/openstack-k8s-operators/infra-operator/apis/memcached/v1beta1"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	mariadbv1 "github.com/openstack-k8s-operators/mariadb-operator/api/v1beta1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// This file plays the controllers that envtest does not run (mariadb-operator,
// infra-operator, the Job and Deployment controllers, the kubelet) by writing the
// status they would write.

var ctx = context.Background()

// setSecretKey sets one key of an existing Secret, as a user rotating a password would.
func setSecretKey(ns, name, key, value string) {
	GinkgoHelper()
	s := &corev1.Secret{}
	Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, s)).To(Succeed())
	s.Data[key] = []byte(value)
	Expect(k8sClient.Update(ctx, s)).To(Succeed())
}

func createSecret(ns, name string, data map[string]string) {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, StringData: data}
	Expect(k8sClient.Create(ctx, s)).To(Succeed())
}

func createMemcached(ns, name string) {
	mc := &memcachedv1.Memcached{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: memcachedv1.MemcachedSpec{MemcachedSpecCore: memcachedv1.MemcachedSpecCore{Replicas: ptr.To[int32](1)}}}
	Expect(k8sClient.Create(ctx, mc)).To(Succeed())
}

// markMemcachedReady plays infra-operator: Ready with a server list.
func markMemcachedReady(ns, name string) {
	Eventually(func(g Gomega) {
		mc := &memcachedv1.Memcached{}
		g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, mc)).To(Succeed())
		mc.Status.Conditions = testutil.ReadyConditions()
		mc.Status.ServerList = []string{name + "-0." + name + "." + ns + ".svc:11211"}
		mc.Status.ReadyCount = 1
		g.Expect(k8sClient.Status().Update(ctx, mc)).To(Succeed())
	}).Should(Succeed())
}

// unmarkMemcachedReady plays infra-operator while memcached's pods restart: not Ready.
func unmarkMemcachedReady(ns, name string) {
	Eventually(func(g Gomega) {
		mc := &memcachedv1.Memcached{}
		g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, mc)).To(Succeed())
		notReady := lc.FalseCondition(lc.ReadyCondition, lc.RequestedReason, lc.SeverityInfo, "memcached pods are restarting")
		notReady.LastTransitionTime = metav1.Now()
		mc.Status.Conditions = lc.Conditions{*notReady}
		g.Expect(k8sClient.Status().Update(ctx, mc)).To(Succeed())
	}).Should(Succeed())
}

// markReady sets the Ready condition of a MariaDB object as mariadb-operator would.
func markReady(obj client.Object, conds *lc.Conditions, key types.NamespacedName) {
	Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, key, obj)).To(Succeed())
		*conds = testutil.ReadyConditions()
		g.Expect(k8sClient.Status().Update(ctx, obj)).To(Succeed())
	}).Should(Succeed())
}

// markDatabaseReady plays mariadb-operator: the database and account Ready, and the
// Galera instance's Service.
func markDatabaseReady(ns, instance string) {
	db := &mariadbv1.MariaDBDatabase{}
	markReady(db, &db.Status.Conditions, types.NamespacedName{Namespace: ns, Name: "keystone"})
	acc := &mariadbv1.MariaDBAccount{}
	markReady(acc, &acc.Status.Conditions, types.NamespacedName{Namespace: ns, Name: "keystone"})
	createGaleraService(ns, instance)
}

func createGaleraService(ns, instance string) {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: instance, Namespace: ns, Labels: map[string]string{"app": "mariadb", "cr": "mariadb-" + instance}},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "mysql", Port: 3306}}},
	}
	Expect(k8sClient.Create(ctx, svc)).To(Succeed())
}

// finishJob plays the Job controller: the job succeeded or exhausted its retries.
// A failed job also gets a pod whose container terminated with exitMessage.
func finishJob(ns, name string, succeeded bool, exitMessage string) {
	job := &batchv1.Job{}
	Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, job)).To(Succeed())
	}).Should(Succeed())
	now := metav1.Now()
	if !succeeded {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-x1", Namespace: ns, Labels: map[string]string{"job-name": name}},
			Spec:       corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "i"}}},
		}
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", Message: exitMessage}}}}
		Expect(k8sClient.Status().Update(ctx, pod)).To(Succeed())
	}
	Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, job)).To(Succeed())
		job.Status.StartTime = &now
		if succeeded {
			job.Status.Succeeded = 1
			job.Status.CompletionTime = &now
			job.Status.Conditions = []batchv1.JobCondition{
				{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
				{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now}}
		} else {
			job.Status.Failed = 4
			job.Status.Conditions = []batchv1.JobCondition{
				{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded",
					Message: "Job has reached the specified backoff limit", LastTransitionTime: now},
				{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded",
					Message: "Job has reached the specified backoff limit", LastTransitionTime: now}}
		}
		g.Expect(k8sClient.Status().Update(ctx, job)).To(Succeed())
	}).Should(Succeed())
}

// jobPod plays the Job controller and the kubelet for one pod of the Job name: created
// as the Job controller makes them (the template's labels, job-name, the Job as its
// controller; ownedBy names another owner's UID for a forgery), then in phase.
func jobPod(ns, name, pod string, phase corev1.PodPhase, ownedBy types.UID) {
	GinkgoHelper()
	job := &batchv1.Job{}
	Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, job)).To(Succeed())
	}).Should(Succeed())
	if ownedBy == "" {
		ownedBy = job.UID
	}
	labels := map[string]string{"job-name": name, "batch.kubernetes.io/job-name": name, "controller-uid": string(ownedBy)}
	for k, v := range job.Spec.Template.Labels {
		labels[k] = v
	}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: ns, Labels: labels, OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "batch/v1", Kind: "Job", Name: name, UID: ownedBy, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "i"}}},
	}
	Expect(k8sClient.Create(ctx, p)).To(Succeed())
	p.Status.Phase = phase
	Expect(k8sClient.Status().Update(ctx, p)).To(Succeed())
}

// rollOut plays the Deployment controller and kubelet: ready replicas of the current spec.
func rollOut(ns, name string, ready int32) {
	Eventually(func(g Gomega) {
		dep := &appsv1.Deployment{}
		g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, dep)).To(Succeed())
		dep.Status = appsv1.DeploymentStatus{ObservedGeneration: dep.Generation, Replicas: ready, ReadyReplicas: ready,
			UpdatedReplicas: ready, AvailableReplicas: ready}
		g.Expect(k8sClient.Status().Update(ctx, dep)).To(Succeed())
	}).Should(Succeed())
}

// exceedDeadline plays the Deployment controller giving up on a rollout.
func exceedDeadline(ns, name string) {
	Eventually(func(g Gomega) {
		dep := &appsv1.Deployment{}
		g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, dep)).To(Succeed())
		dep.Status = appsv1.DeploymentStatus{ObservedGeneration: dep.Generation, Replicas: 1, UpdatedReplicas: 1,
			UnavailableReplicas: 1, Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing,
				Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded", Message: `ReplicaSet "keystone-x" has timed out progressing.`,
				LastUpdateTime: metav1.Now(), LastTransitionTime: metav1.NewTime(time.Now())}}}
		g.Expect(k8sClient.Status().Update(ctx, dep)).To(Succeed())
	}).Should(Succeed())
}
