//go:build bench

// Package critical measures row 10 of BENCHMARKS.md: the sample KeystoneAPI on the
// local cluster (make run's, where Keystone's pods really run), its time to Ready, and
// beside it the durations of the pods it waits on, read from the API as a watch sees
// them, and the critical path they imply. hack/bench-pods.sh starts the cluster, the
// operator and the actor (tests/e2e/actor), and runs it with BENCH_KUBECONFIG.
package critical

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/tests/support/benchcluster"
	memcachedv1 "github.com/openstack-k8s-operators/infra-operator/apis/memcached/v1beta1"
	rabbitmqv1 "github.com/openstack-k8s-operators/infra-operator/apis/rabbitmq/v1beta1"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	mariadbv1 "github.com/openstack-k8s-operators/mariadb-operator/api/v1beta1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// rowFile is where the row is written for tests/bench's report (make bench).
const rowFile = "bin/bench-row10.json"

// TestCriticalPath creates the sample KeystoneAPI with its Secret and Memcached in a
// namespace of its own, BENCH_PODS_RUNS times (default 3), and writes row 10.
func TestCriticalPath(t *testing.T) {
	_, c, root := benchcluster.Connect(t, "bench-pods", "hack/bench-pods.sh")
	runs := 3
	if n, err := fmt.Sscan(os.Getenv("BENCH_PODS_RUNS"), &runs); n != 1 || err != nil {
		runs = 3
	}
	var results []*rollout
	for i := range runs {
		ns := fmt.Sprintf("bench-pods-%d-%d", time.Now().Unix(), i)
		r := measure(t, c, root, ns)
		t.Logf("run %d (%s): %s", i+1, ns, r.summary())
		results = append(results, r)
	}
	data, err := json.Marshal([][]string{rowOf(results)})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, rowFile), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// seen is what a watch saw: every version of every object, with when it arrived.
type seen struct {
	mu     sync.Mutex
	events []sighting
}

type sighting struct {
	at  time.Time
	obj client.Object
}

// follow records every version of list's kind in namespace ns until ctx ends.
func (s *seen) follow(ctx context.Context, t *testing.T, c client.WithWatch, list client.ObjectList, ns string) {
	w, err := c.Watch(ctx, list, client.InNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		<-ctx.Done()
		w.Stop()
	}()
	go func() {
		for ev := range w.ResultChan() {
			if obj, ok := ev.Object.(client.Object); ok {
				s.mu.Lock()
				s.events = append(s.events, sighting{time.Now(), obj})
				s.mu.Unlock()
			}
		}
	}()
}

// first is when the first version of an object of obj's type for which match holds
// arrived; zero when none did.
func first[T client.Object](s *seen, match func(T) bool) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.events {
		if obj, ok := e.obj.(T); ok && match(obj) {
			return e.at
		}
	}
	return time.Time{}
}

func every[T client.Object](T) bool { return true }

// rollout is one run's times, all as the watches saw them, from the KeystoneAPI's create.
type rollout struct {
	start, ready time.Time
	// The dependencies: created and Ready.
	dbCreated, dbReady, accountCreated, accountReady, transportCreated, transportReady, memcachedCreated, memcachedReady time.Time
	// The pods: the first pod of each Job seen, and the Job done (a pod Succeeded); the
	// API Deployment's first pod, and all its replicas ready.
	dbSyncJob, dbSyncPod, dbSyncDone, bootstrapJob, bootstrapPod, bootstrapDone time.Time
	deployment, apiPod, apiReady                                                time.Time
	// The API pods' container started (the kubelet's record, to the second), and
	// Keystone's first answer to GET /v3 in them (polled every 50 ms from this machine).
	apiStarted, apiAnswered time.Time
}

func measure(t *testing.T, c client.WithWatch, root, ns string) *rollout {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	defer remove(t, c, ns)
	s := &seen{}
	watching, stop := context.WithCancel(ctx)
	defer stop()
	for _, l := range []client.ObjectList{&keystonev1.KeystoneAPIList{}, &corev1.PodList{}, &batchv1.JobList{}, &appsv1.DeploymentList{},
		&mariadbv1.MariaDBDatabaseList{}, &mariadbv1.MariaDBAccountList{}, &rabbitmqv1.TransportURLList{}, &memcachedv1.MemcachedList{}} {
		s.follow(watching, t, c, l, ns)
	}
	secret, memcached, api := &corev1.Secret{}, &memcachedv1.Memcached{}, &keystonev1.KeystoneAPI{}
	for path, obj := range map[string]client.Object{
		"config/samples/osp-secret.yaml":                   secret,
		"config/samples/local-cluster/memcached.yaml":      memcached,
		"config/samples/keystone_v1beta1_keystoneapi.yaml": api,
	} {
		data, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(data, obj); err != nil {
			t.Fatal(err)
		}
		obj.SetNamespace(ns)
	}
	if err := c.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	r := &rollout{start: time.Now()}
	// As openstack-operator writes them: the Memcached and the KeystoneAPI together.
	for _, obj := range []client.Object{memcached, api} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	answered := make(chan time.Time, 1)
	go firstAnswer(watching, s, answered)
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 5*time.Minute, true, func(context.Context) (bool, error) {
		r.ready = first(s, func(a *keystonev1.KeystoneAPI) bool {
			return a.Status.ObservedGeneration == a.Generation && a.Status.Conditions.IsTrue(lc.ReadyCondition)
		})
		return !r.ready.IsZero(), nil
	})
	if err != nil {
		got := &keystonev1.KeystoneAPI{}
		_ = c.Get(ctx, client.ObjectKeyFromObject(api), got)
		t.Fatalf("namespace %s: the KeystoneAPI not Ready within 5 minutes: %v", ns, got.Status.Conditions)
	}
	stop()
	r.read(s)
	r.apiAnswered = <-answered
	return r
}

// firstAnswer polls every 50 ms, from this machine, GET /v3 on each API pod the watch
// has seen with an address, and sends when Keystone first answered 200 (zero when ctx
// ended first).
func firstAnswer(ctx context.Context, s *seen, answered chan<- time.Time) {
	httpClient := &http.Client{Timeout: 500 * time.Millisecond}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		for _, ip := range apiPodIPs(s) {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://%s:%d/v3", ip, deploy.Port), nil)
			if resp, err := httpClient.Do(req); err == nil {
				_ = resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					answered <- time.Now()
					return
				}
			}
		}
		select {
		case <-ctx.Done():
			answered <- time.Time{}
			return
		case <-tick.C:
		}
	}
}

// apiPodIPs are the addresses of the API pods the watch has seen.
func apiPodIPs(s *seen) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ips []string
	for _, e := range s.events {
		if p, ok := e.obj.(*corev1.Pod); ok && isAPIPod(p) && p.Status.PodIP != "" && !slices.Contains(ips, p.Status.PodIP) {
			ips = append(ips, p.Status.PodIP)
		}
	}
	return ips
}

func isAPIPod(p *corev1.Pod) bool {
	return p.Labels["pod-template-hash"] != "" && p.Labels["service"] == "keystone"
}

// read takes the times from what the watches saw.
func (r *rollout) read(s *seen) {
	ready := func(conds lc.Conditions) bool { return conds.IsTrue(lc.ReadyCondition) }
	r.dbCreated = first(s, every[*mariadbv1.MariaDBDatabase])
	r.dbReady = first(s, func(o *mariadbv1.MariaDBDatabase) bool { return ready(o.Status.Conditions) })
	r.accountCreated = first(s, every[*mariadbv1.MariaDBAccount])
	r.accountReady = first(s, func(o *mariadbv1.MariaDBAccount) bool { return ready(o.Status.Conditions) })
	r.transportCreated = first(s, every[*rabbitmqv1.TransportURL])
	r.transportReady = first(s, func(o *rabbitmqv1.TransportURL) bool { return ready(o.Status.Conditions) })
	r.memcachedCreated = first(s, every[*memcachedv1.Memcached])
	r.memcachedReady = first(s, func(o *memcachedv1.Memcached) bool { return ready(o.Status.Conditions) })
	job := func(name string) (created, pod, done time.Time) {
		created = first(s, func(j *batchv1.Job) bool { return j.Name == name })
		pod = first(s, func(p *corev1.Pod) bool { return p.Labels["job-name"] == name })
		done = first(s, func(p *corev1.Pod) bool { return p.Labels["job-name"] == name && p.Status.Phase == corev1.PodSucceeded })
		return created, pod, done
	}
	r.dbSyncJob, r.dbSyncPod, r.dbSyncDone = job("keystone-db-sync")
	r.bootstrapJob, r.bootstrapPod, r.bootstrapDone = job("keystone-bootstrap")
	r.deployment = first(s, func(d *appsv1.Deployment) bool { return d.Name == "keystone" })
	r.apiPod = first(s, isAPIPod)
	s.mu.Lock()
	for _, e := range s.events {
		if p, ok := e.obj.(*corev1.Pod); ok && isAPIPod(p) && len(p.Status.ContainerStatuses) > 0 {
			if run := p.Status.ContainerStatuses[0].State.Running; run != nil && (r.apiStarted.IsZero() || run.StartedAt.Time.Before(r.apiStarted)) {
				r.apiStarted = run.StartedAt.Time
			}
		}
	}
	s.mu.Unlock()
	r.apiReady = first(s, func(d *appsv1.Deployment) bool {
		return d.Name == "keystone" && d.Status.ObservedGeneration == d.Generation && d.Spec.Replicas != nil &&
			d.Status.ReadyReplicas == *d.Spec.Replicas && d.Status.UpdatedReplicas == *d.Spec.Replicas
	})
}

// The pods' and dependencies' own durations, from creation to done or Ready.
func (r *rollout) dbSync() time.Duration    { return r.dbSyncDone.Sub(r.dbSyncPod) }
func (r *rollout) bootstrap() time.Duration { return r.bootstrapDone.Sub(r.bootstrapPod) }
func (r *rollout) api() time.Duration       { return r.apiReady.Sub(r.apiPod) }

// dependencies is the longest of the dependencies' own durations: the database (its
// account needs it), the TransportURL and the Memcached, each from its creation.
func (r *rollout) dependencies() time.Duration {
	db := max(r.dbReady.Sub(r.dbCreated), r.accountReady.Sub(r.accountCreated))
	return max(db, r.transportReady.Sub(r.transportCreated), r.memcachedReady.Sub(r.memcachedCreated))
}

// podsPath is the critical path of Keystone's own pods: db-sync (the schema), then
// bootstrap and the API pods, which need only the schema.
func (r *rollout) podsPath() time.Duration { return r.dbSync() + max(r.bootstrap(), r.api()) }

// critical is the critical path the pods imply: the dependencies asked at once, then
// Keystone's pods (podsPath).
func (r *rollout) critical() time.Duration { return r.dependencies() + r.podsPath() }

// sequential is db-sync, bootstrap and the rollout one after the other.
func (r *rollout) sequential() time.Duration { return r.dbSync() + r.bootstrap() + r.api() }

func (r *rollout) toReady() time.Duration { return r.ready.Sub(r.start) }

// The operator's gaps: from what a step waits on turning done to the next object.
func (r *rollout) gaps() map[string]time.Duration {
	depsReady := latest(r.dbReady, r.accountReady, r.transportReady, r.memcachedReady)
	return map[string]time.Duration{
		"dependencies Ready → db-sync Job":   r.dbSyncJob.Sub(depsReady),
		"db-sync done → bootstrap Job":       r.bootstrapJob.Sub(r.dbSyncDone),
		"db-sync done → Deployment":          r.deployment.Sub(r.dbSyncDone),
		"bootstrap and rollout done → Ready": r.ready.Sub(latest(r.bootstrapDone, r.apiReady)),
	}
}

func latest(ts ...time.Time) time.Time {
	var out time.Time
	for _, t := range ts {
		if t.After(out) {
			out = t
		}
	}
	return out
}

func (r *rollout) summary() string {
	gaps := r.gaps()
	keys := make([]string, 0, len(gaps))
	for k := range gaps {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var g []string
	for _, k := range keys {
		g = append(g, fmt.Sprintf("%s %s", k, ms(gaps[k])))
	}
	return fmt.Sprintf("Ready in %s; critical path %s (dependencies %s: database %s, account %s, TransportURL %s, Memcached %s; then "+
		"Keystone's pods %s: db-sync pod %s, then the longer of bootstrap pod %s and API pods %s; in sequence db-sync + bootstrap + "+
		"rollout would be %s; the API pods' container started → Keystone's first answer to /v3 %s, first answer → all ready %s); "+
		"ratio %.2f; operator's gaps: %s",
		secs(r.toReady()), secs(r.critical()), secs(r.dependencies()), secs(r.dbReady.Sub(r.dbCreated)), secs(r.accountReady.Sub(r.accountCreated)),
		secs(r.transportReady.Sub(r.transportCreated)), secs(r.memcachedReady.Sub(r.memcachedCreated)), secs(r.podsPath()),
		secs(r.dbSync()), secs(r.bootstrap()), secs(r.api()), secs(r.sequential()),
		secs(r.apiAnswered.Sub(r.apiStarted)), secs(r.apiReady.Sub(r.apiAnswered)),
		r.toReady().Seconds()/r.critical().Seconds(), strings.Join(g, ", "))
}

func secs(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }
func ms(d time.Duration) string   { return fmt.Sprintf("%d ms", d.Milliseconds()) }

// median is the median of f over the runs.
func median(rs []*rollout, f func(*rollout) time.Duration) time.Duration {
	v := make([]time.Duration, 0, len(rs))
	for _, r := range rs {
		v = append(v, f(r))
	}
	sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
	return v[len(v)/2]
}

// rowOf is row 10 from the runs: medians, and the median run's summary.
func rowOf(rs []*rollout) []string {
	sorted := append([]*rollout(nil), rs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].toReady() < sorted[j].toReady() })
	mid := sorted[len(sorted)/2]
	ratio := func(r *rollout) time.Duration {
		return time.Duration(float64(time.Second) * r.toReady().Seconds() / r.critical().Seconds())
	}
	answerToReady := func(r *rollout) time.Duration { return r.apiReady.Sub(r.apiAnswered) }
	measured := fmt.Sprintf("median %s to Ready (min %s, max %s); median critical path %s, of which Keystone's pods %s "+
		"(db-sync + bootstrap + rollout in sequence: median %s); median ratio %.2f; the API pods all ready a median %s after "+
		"Keystone's first answer to /v3; the median run: %s",
		secs(mid.toReady()), secs(sorted[0].toReady()), secs(sorted[len(sorted)-1].toReady()), secs(median(rs, (*rollout).critical)),
		secs(median(rs, (*rollout).podsPath)), secs(median(rs, (*rollout).sequential)), median(rs, ratio).Seconds(),
		secs(median(rs, answerToReady)), mid.summary())
	return []string{"10", fmt.Sprintf("critical path with real pods: the sample KeystoneAPI (and its Memcached) on the local cluster of make run, "+
		"the actor playing mariadb-operator and infra-operator with real MariaDB, memcached and RabbitMQ pods; from the create to Ready, "+
		"beside the pods' own durations as a watch saw them (each Job's first pod created → Succeeded, the API pods' first created → all "+
		"replicas ready, each dependency created → Ready, and the API pods' first answer to /v3, polled from the host); %d runs", len(rs)),
		measured, "time to Ready ≤ 1.05 × the critical path; Keystone's pods' path < db-sync + bootstrap + rollout in sequence", "—", "make bench-pods"}
}

// remove deletes the KeystoneAPI (its finalizers need the operator), then the
// namespace, and waits for both, so that the next run has the node to itself.
func remove(t *testing.T, c client.Client, ns string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	_ = c.DeleteAllOf(ctx, &keystonev1.KeystoneAPI{}, client.InNamespace(ns))
	_ = c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	err := wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	if err != nil {
		t.Errorf("namespace %s not gone within 5 minutes: %v", ns, err)
	}
}
