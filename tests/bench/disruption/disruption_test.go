//go:build bench

// Package disruption measures row 11 of BENCHMARKS.md: whether Keystone answers through
// every change the operator makes. The sample KeystoneAPI runs on the local cluster (make
// run's, Keystone's pods really running), with 1 and then 2 replicas; bounded load goes
// from this machine through its public and internal Services while each change happens
// (configuration, image, rollout restart, fernet and credential key rotation, scale up
// and down, the operator restarted and upgraded, one eviction, a drain of the API pods),
// and every failed request is counted by kind, with the window from the first to the
// last. hack/bench-disruption.sh starts the cluster and the actor (tests/e2e/actor); the
// operator runs in this process, so that it can be restarted and upgraded.
package disruption

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/cmd/manager"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/tests/support/benchcluster"
	"github.com/keystone-stepwise/keystone-operator/tests/support/procstat"
	memcachedv1 "github.com/openstack-k8s-operators/infra-operator/apis/memcached/v1beta1"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// rowFile is where the row is written for tests/bench's report (make bench).
const rowFile = "bin/bench-row11.json"

// clusterDNS resolves the cluster's Service names for the operator run on this machine
// (the local cluster's CoreDNS, as make run's devrun uses it).
const clusterDNS = "10.244.0.1:53"

// TestDisruption deploys the sample KeystoneAPI with 1 and then 2 replicas and measures
// the failed requests of each change; it writes row 11.
func TestDisruption(t *testing.T) {
	cfg, c, root := benchcluster.Connect(t, "bench-disruption", "hack/bench-disruption.sh")
	b := &bench{t: t, c: c, cfg: cfg, root: root, drain: deploy.DrainSeconds}
	b.startOperator()
	defer b.stopOperator()
	b.removeLeftovers()
	var results []result
	only, err := regexp.Compile(os.Getenv("BENCH_DISRUPTION_CHANGES"))
	if err != nil {
		t.Fatalf("BENCH_DISRUPTION_CHANGES: %v", err)
	}
	for _, replicas := range []int32{1, 2} {
		if r := os.Getenv("BENCH_DISRUPTION_REPLICAS"); r != "" && r != strconv.Itoa(int(replicas)) {
			continue
		}
		results = append(results, b.series(replicas, only)...)
	}
	for _, r := range results {
		t.Log(r.String())
	}
	if os.Getenv("BENCH_DISRUPTION_CHANGES") != "" || os.Getenv("BENCH_DISRUPTION_REPLICAS") != "" {
		return // a selection, not the row
	}
	data, err := json.Marshal([][]string{rowOf(results)})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, rowFile), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// bench is one run: the cluster, the operator running in this process, its drain.
type bench struct {
	t      *testing.T
	c      client.Client
	cfg    *rest.Config
	root   string
	drain  int64
	cancel context.CancelFunc
	done   chan error
	// ns and the KeystoneAPI of the current series.
	ns  string
	api types.NamespacedName
	// evicted is the pod the eviction evicted, drained those the drain did.
	evicted types.UID
	drained []types.UID
}

// startOperator runs the operator in this process with the bench's drain.
func (b *bench) startOperator() {
	mgr, err := manager.New(b.cfg, manager.Options{MetricsAddr: "0", ProbeAddr: "0", ClusterDNS: clusterDNS, Isolated: true,
		APIDrainSeconds: b.drain})
	if err != nil {
		b.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.cancel, b.done = cancel, make(chan error, 1)
	go func() { b.done <- mgr.Start(ctx) }()
}

// stopOperator stops the operator and waits for it.
func (b *bench) stopOperator() {
	if b.cancel == nil {
		return
	}
	b.cancel()
	if err := <-b.done; err != nil {
		b.t.Errorf("the operator stopped with %v", err)
	}
	b.cancel = nil
}

// change is one thing the operator or an admin does to a running Keystone. reacted,
// when set, tells when the operator has acted on it (before that, converged would see
// the state before the change); the load goes on for observe after convergence (5 s
// when zero).
type change struct {
	name    string
	do      func(ctx context.Context, b *bench) error
	reacted func(ctx context.Context, b *bench) (bool, error)
	observe time.Duration
}

// propagated is how long a change of the keys Secret is watched after convergence: the
// kubelet updates the pods' copies within its sync period and its cache's lifetime
// (about a minute each at their defaults), one pod after the other, and tokens issued by
// one pod must stay valid on the other meanwhile.
const propagated = 90 * time.Second

// changes are measured in this order, for each number of replicas.
var changes = []change{
	{name: "configuration change (customServiceConfig)", do: func(ctx context.Context, b *bench) error {
		return b.updateAPI(ctx, func(a *keystonev1.KeystoneAPI) {
			a.Spec.CustomServiceConfig += fmt.Sprintf("# changed at %s\n", time.Now().UTC().Format(time.RFC3339Nano))
		})
	}},
	{name: "image change (containerImage, another name of the image)", do: func(ctx context.Context, b *bench) error {
		other, err := b.otherImageName(ctx)
		if err != nil {
			return err
		}
		return b.updateAPI(ctx, func(a *keystonev1.KeystoneAPI) { a.Spec.ContainerImage = other })
	}},
	{name: "rollout restart (kubectl rollout restart deployment)", do: func(ctx context.Context, b *bench) error {
		dep := &appsv1.Deployment{}
		if err := b.c.Get(ctx, b.api, dep); err != nil {
			return err
		}
		patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":%q}}}}}`,
			time.Now().Format(time.RFC3339))
		return b.c.Patch(ctx, dep, client.RawPatch(types.StrategicMergePatchType, []byte(patch)))
	}},
	{name: "fernet key rotation (rotatedat in the past)", do: func(ctx context.Context, b *bench) error {
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, deploy.RotatedAtAnnotation, longAgo)
		keys := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: b.ns, Name: deploy.KeysSecretName(nil)}}
		return b.c.Patch(ctx, keys, client.RawPatch(types.MergePatchType, []byte(patch)))
	}, reacted: func(ctx context.Context, b *bench) (bool, error) {
		keys := &corev1.Secret{}
		if err := b.c.Get(ctx, types.NamespacedName{Namespace: b.ns, Name: deploy.KeysSecretName(nil)}, keys); err != nil {
			return false, err
		}
		return keys.Annotations[deploy.RotatedAtAnnotation] != longAgo, nil // the operator rotated and wrote the time
	}, observe: propagated},
	{name: "credential key rotation (keystone-manage credential_rotate's, written into the keys Secret)", do: rotateCredentialKeys,
		observe: propagated},
	{name: "scale up (one more replica)", do: func(ctx context.Context, b *bench) error { return b.scale(ctx, +1) }},
	{name: "scale down (back)", do: func(ctx context.Context, b *bench) error { return b.scale(ctx, -1) }},
	{name: "operator restart", do: func(_ context.Context, b *bench) error {
		b.stopOperator()
		b.startOperator()
		return nil
	}},
	{name: "operator upgrade (its pod template changes once: one more second of drain)", do: func(_ context.Context, b *bench) error {
		b.stopOperator()
		b.drain++
		b.startOperator()
		return nil
	}},
	{name: "one eviction", do: func(ctx context.Context, b *bench) error {
		pods, err := b.apiPods(ctx)
		if err != nil || len(pods) == 0 {
			return fmt.Errorf("no API pod to evict: %w", err)
		}
		b.evicted = pods[0].UID
		return b.evict(ctx, &pods[0])
	}, reacted: func(ctx context.Context, b *bench) (bool, error) {
		// Until the evicted pod is gone, the Deployment may still count it ready.
		pods, err := b.apiPods(ctx)
		return !slices.ContainsFunc(pods, func(p corev1.Pod) bool { return p.UID == b.evicted }), err
	}},
	// The node is not cordoned: the local cluster has one, and the replacements start there
	// as they would on another node of a larger cluster.
	{name: "drain of the API pods (every one evicted at once, retried while the PodDisruptionBudget refuses, as kubectl drain --pod-selector; the only node not cordoned)",
		do: func(ctx context.Context, b *bench) error {
			pods, err := b.apiPods(ctx)
			if err != nil {
				return err
			}
			b.drained = nil
			for _, p := range pods {
				b.drained = append(b.drained, p.UID)
			}
			errs := make(chan error, len(pods))
			for i := range pods {
				go func() { errs <- b.evict(ctx, &pods[i]) }()
			}
			for range pods {
				if err := <-errs; err != nil {
					return err
				}
			}
			return nil
		}, reacted: func(ctx context.Context, b *bench) (bool, error) {
			// Until the drained pods are gone, the Deployment may still count them ready.
			pods, err := b.apiPods(ctx)
			return !slices.ContainsFunc(pods, func(p corev1.Pod) bool { return slices.Contains(b.drained, p.UID) }), err
		}},
}

// series deploys the sample KeystoneAPI with replicas in a namespace of its own and
// measures every change that only matches (BENCH_DISRUPTION_CHANGES, a regular
// expression; BENCH_DISRUPTION_REPLICAS selects the series: a selection writes no row).
func (b *bench) series(replicas int32, only *regexp.Regexp) []result {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Minute)
	defer cancel()
	if b.drain != deploy.DrainSeconds {
		// The previous series upgraded the operator: each series starts from the default.
		b.stopOperator()
		b.drain = deploy.DrainSeconds
		b.startOperator()
	}
	b.ns = fmt.Sprintf("%s%d-%d", namespacePrefix, replicas, time.Now().Unix())
	b.api = types.NamespacedName{Namespace: b.ns, Name: "keystone"}
	b.deploy(ctx, replicas)
	defer b.remove()
	l, err := newLoad(ctx, b.c, b.ns)
	if err != nil {
		b.t.Fatal(err)
	}
	var out []result
	for _, ch := range changes {
		if !only.MatchString(ch.name) {
			continue
		}
		r := result{replicas: replicas, change: ch.name}
		started := nodeBusyNow(b.t)
		l.start()
		time.Sleep(3 * time.Second) // answered before the change
		begin, changed := time.Now(), nodeBusyNow(b.t)
		if err := ch.do(ctx, b); err != nil {
			b.t.Fatalf("%s: %v", ch.name, err)
		}
		if ch.reacted != nil {
			if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
				return ch.reacted(ctx, b)
			}); err != nil {
				b.t.Fatalf("%s: the operator did not act on it within 5 minutes: %v", ch.name, err)
			}
		}
		if err := b.converged(ctx); err != nil {
			b.t.Fatalf("%s: %v", ch.name, err)
		}
		r.took = time.Since(begin)
		r.loadAlone, r.changing = changed.ProcessorsSince(started, runtime.NumCPU()), nodeBusyNow(b.t).ProcessorsSince(changed, runtime.NumCPU())
		observe := ch.observe
		if observe == 0 {
			observe = 5 * time.Second
		}
		time.Sleep(observe) // answered after
		r.requests, r.failures = l.stop()
		r.begin = begin
		b.t.Log(r.String())
		out = append(out, r)
	}
	return out
}

// deploy creates the sample Secret, Memcached and KeystoneAPI (with replicas) in the
// bench's namespace and waits until it is Ready.
func (b *bench) deploy(ctx context.Context, replicas int32) {
	if err := b.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: b.ns}}); err != nil {
		b.t.Fatal(err)
	}
	secret, memcached, api := &corev1.Secret{}, &memcachedv1.Memcached{}, &keystonev1.KeystoneAPI{}
	for path, obj := range map[string]client.Object{
		"config/samples/osp-secret.yaml":                   secret,
		"config/samples/local-cluster/memcached.yaml":      memcached,
		"config/samples/keystone_v1beta1_keystoneapi.yaml": api,
	} {
		data, err := os.ReadFile(filepath.Join(b.root, path))
		if err != nil {
			b.t.Fatal(err)
		}
		if err := yaml.Unmarshal(data, obj); err != nil {
			b.t.Fatal(err)
		}
		obj.SetNamespace(b.ns)
	}
	api.Spec.Replicas = ptr.To(replicas)
	for _, obj := range []client.Object{secret, memcached, api} {
		if err := b.c.Create(ctx, obj); err != nil {
			b.t.Fatal(err)
		}
	}
	if err := b.converged(ctx); err != nil {
		b.t.Fatal(err)
	}
}

// namespacePrefix begins the name of every series' namespace.
const namespacePrefix = "bench-disruption-"

// remove deletes the series' namespace and waits until it is gone.
func (b *bench) remove() { b.removeNamespace(b.ns) }

// removeNamespace deletes namespace ns and waits until it is gone, for at most 5 minutes.
func (b *bench) removeNamespace(name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := b.c.Delete(ctx, ns); client.IgnoreNotFound(err) != nil {
		b.t.Errorf("deleting namespace %s: %v", name, err)
		return
	}
	if err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		return apierrors.IsNotFound(b.c.Get(ctx, client.ObjectKeyFromObject(ns), ns)), nil
	}); err != nil {
		b.t.Errorf("namespace %s still there after 5 minutes: %v", name, err)
	}
}

// removeLeftovers removes the namespaces of an earlier run that was killed before it
// removed them: their Keystone pods would share the node's processors with this run's.
// The operator runs meanwhile, so that their KeystoneAPIs' finalizers go.
func (b *bench) removeLeftovers() {
	list := &corev1.NamespaceList{}
	if err := b.c.List(context.Background(), list); err != nil {
		b.t.Fatal(err)
	}
	for _, ns := range list.Items {
		if strings.HasPrefix(ns.Name, namespacePrefix) {
			b.t.Logf("removing namespace %s, left by an earlier run", ns.Name)
			b.removeNamespace(ns.Name)
		}
	}
}

// converged waits until the KeystoneAPI is Ready for its generation, its Deployment's
// pods drain as the running operator has them drain (after an upgrade, once the new
// operator has rolled them), and its API pods are exactly the Deployment's replicas, all
// updated and ready, none stopping.
func (b *bench) converged(ctx context.Context) error {
	var why string
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		api := &keystonev1.KeystoneAPI{}
		if err := b.c.Get(ctx, b.api, api); err != nil {
			return false, err
		}
		if api.Status.ObservedGeneration != api.Generation || !api.Status.Conditions.IsTrue(lc.ReadyCondition) {
			why = "KeystoneAPI not Ready: " + readyMessage(api)
			return false, nil
		}
		dep := &appsv1.Deployment{}
		if err := b.c.Get(ctx, b.api, dep); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		if !drainsFor(dep, b.drain) {
			why = fmt.Sprintf("deployment: its pods do not drain for %d s yet", b.drain)
			return false, nil
		}
		want := ptr.Deref(dep.Spec.Replicas, 1)
		st := dep.Status
		if st.ObservedGeneration != dep.Generation || st.UpdatedReplicas != want || st.Replicas != want || st.ReadyReplicas != want {
			why = fmt.Sprintf("deployment: %d updated, %d in all, %d ready of %d", st.UpdatedReplicas, st.Replicas, st.ReadyReplicas, want)
			return false, nil
		}
		pods, err := b.apiPods(ctx)
		if err != nil {
			return false, err
		}
		stopping := slices.ContainsFunc(pods, func(p corev1.Pod) bool { return p.DeletionTimestamp != nil })
		if len(pods) != int(want) || stopping {
			why = fmt.Sprintf("%d API pods, %d wanted, none stopping", len(pods), want)
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("not converged within 10 minutes (%s): %w", why, err)
	}
	return nil
}

// longAgo is the rotation time the fernet rotation writes: a rotation long overdue.
const longAgo = "2000-01-01T00:00:00Z"

// drainsFor tells whether dep's API container drains for drain seconds when it stops.
func drainsFor(dep *appsv1.Deployment, drain int64) bool {
	for _, c := range dep.Spec.Template.Spec.Containers {
		if c.Lifecycle != nil && c.Lifecycle.PreStop != nil && c.Lifecycle.PreStop.Exec != nil &&
			slices.Equal(c.Lifecycle.PreStop.Exec.Command, deploy.HttpdDrain(drain)) {
			return true
		}
	}
	return false
}

func readyMessage(api *keystonev1.KeystoneAPI) string {
	if c := api.Status.Conditions.Get(lc.ReadyCondition); c != nil {
		return c.Message
	}
	return "no Ready condition"
}

// apiPods are the KeystoneAPI's API pods, those stopping included.
func (b *bench) apiPods(ctx context.Context) ([]corev1.Pod, error) {
	list := &corev1.PodList{}
	err := b.c.List(ctx, list, client.InNamespace(b.ns), client.MatchingLabels{"service": "keystone", "owner": "keystone"})
	return list.Items, err
}

// updateAPI changes the KeystoneAPI, retrying on conflicts.
func (b *bench) updateAPI(ctx context.Context, mutate func(*keystonev1.KeystoneAPI)) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		api := &keystonev1.KeystoneAPI{}
		if err := b.c.Get(ctx, b.api, api); err != nil {
			return false, err
		}
		mutate(api)
		err := b.c.Update(ctx, api)
		return err == nil, client.IgnoreNotFound(ignoreConflict(err))
	})
}

func ignoreConflict(err error) error {
	if apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// scale adds by replicas to the KeystoneAPI's.
func (b *bench) scale(ctx context.Context, by int32) error {
	return b.updateAPI(ctx, func(a *keystonev1.KeystoneAPI) { a.Spec.Replicas = ptr.To(*deploy.Replicas(a) + by) })
}

// otherImageName is another name the node knows the API pods' image by (the local
// cluster's images carry two: localhost/keystone-stepwise/keystone:<suite> and
// keystone-operator's default, quay.io/...:current-podified), for an image change that
// needs no pull.
func (b *bench) otherImageName(ctx context.Context) (string, error) {
	api := &keystonev1.KeystoneAPI{}
	if err := b.c.Get(ctx, b.api, api); err != nil {
		return "", err
	}
	nodes := &corev1.NodeList{}
	if err := b.c.List(ctx, nodes); err != nil {
		return "", err
	}
	for _, n := range nodes.Items {
		for _, img := range n.Status.Images {
			if !slices.Contains(img.Names, api.Spec.ContainerImage) {
				continue
			}
			for _, name := range img.Names {
				if name != api.Spec.ContainerImage && !strings.Contains(name, "@") {
					return name, nil
				}
			}
		}
	}
	return "", fmt.Errorf("the node knows image %s by no other name", api.Spec.ContainerImage)
}

// rotateCredentialKeys rotates the credential keys of the keys Secret as keystone-manage
// credential_rotate does: the staged key (0) becomes the primary (the highest), a new
// staged key is made, the former primary is kept, at most 3 (its MAX_ACTIVE_KEYS).
func rotateCredentialKeys(ctx context.Context, b *bench) error {
	keys := &corev1.Secret{}
	if err := b.c.Get(ctx, types.NamespacedName{Namespace: b.ns, Name: deploy.KeysSecretName(nil)}, keys); err != nil {
		return err
	}
	current := deploy.CredentialKeys(keys.Data)
	next := []string{newKey()}
	next = append(next, current[1:]...)
	next = append(next, current[0])
	if len(next) > 3 {
		next = append(next[:1], next[len(next)-2:]...)
	}
	for k := range keys.Data {
		if strings.HasPrefix(k, deploy.CredentialKeyPrefix) {
			delete(keys.Data, k)
		}
	}
	for i, key := range next {
		keys.Data[fmt.Sprintf("%s%d", deploy.CredentialKeyPrefix, i)] = []byte(key)
	}
	return b.c.Update(ctx, keys)
}

// newKey is a fernet key as keystone-manage writes one: 32 random bytes, url-safe base64.
func newKey() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.URLEncoding.EncodeToString(b)
}

// evict evicts pod through the Eviction API, as kubectl drain does: retried every
// second while the PodDisruptionBudget refuses (429), for at most 5 minutes.
func (b *bench) evict(ctx context.Context, pod *corev1.Pod) error {
	eviction := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name}}
	return wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		err := b.c.SubResource("eviction").Create(ctx, pod, eviction)
		switch {
		case err == nil, apierrors.IsNotFound(err):
			return true, nil
		case apierrors.IsTooManyRequests(err):
			return false, nil
		}
		return false, err
	})
}

// result is one change measured with one number of replicas.
type result struct {
	replicas int32
	change   string
	begin    time.Time
	took     time.Duration
	requests int
	failures []failure
	// loadAlone and changing are the node's processors in use: with the load alone, in
	// the 3 s before the change, and from the change until convergence.
	loadAlone, changing float64
}

func (r result) String() string {
	return fmt.Sprintf("%d replica(s), %s: %s (converged in %.1f s)", r.replicas, r.change, r.summary(), r.took.Seconds())
}

// summary says the failures: how many of how many requests, by kind, and their window.
func (r result) summary() string {
	node := fmt.Sprintf("; node's processors in use: %.2f with the load alone, %.2f until converged", r.loadAlone, r.changing)
	if len(r.failures) == 0 {
		return fmt.Sprintf("0 failed of %d%s", r.requests, node)
	}
	kinds := map[string]int{}
	for _, f := range r.failures {
		kinds[f.kind]++
	}
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, k := range names {
		parts = append(parts, fmt.Sprintf("%d %s", kinds[k], k))
	}
	first, last := r.failures[0].at, r.failures[len(r.failures)-1].at
	return fmt.Sprintf("%d failed of %d (%s) over %.1f s, from %.1f s after the change%s", len(r.failures), r.requests,
		strings.Join(parts, ", "), last.Sub(first).Seconds(), first.Sub(r.begin).Seconds(), node)
}

// nodeBusyNow reads the node's processors in use: this process runs on the local
// cluster's only node.
func nodeBusyNow(t *testing.T) procstat.Node {
	n, err := procstat.ReadNode()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// rowOf is row 11 of the report.
func rowOf(results []result) []string {
	var one, two []string
	for _, r := range results {
		cell := fmt.Sprintf("%s: %s", r.change, r.summary())
		if r.replicas == 1 {
			one = append(one, cell)
		} else {
			two = append(two, cell)
		}
	}
	return []string{"11", "Keystone answers through every change: the sample KeystoneAPI on the local cluster of make run, the " +
		"operator run on the host; from the host, 12 requests a second through the keystone-public and keystone-internal Services " +
		"(a token issued, two validated, three GET /v3; half on kept-alive connections, half on new ones; 5 s timeout) from 3 s " +
		"before each change to 5 s after the API pods converged; with each change, the node's processors in use (/proc/stat) " +
		"with the load alone and until the change converged",
		fmt.Sprintf("2 replicas: %s. 1 replica: %s", strings.Join(two, "; "), strings.Join(one, "; ")),
		"0 failed requests for every change with 2 replicas; with 1, 0 for every change but a drain", "— (issue 56, before this suite's drain: a configuration change 19 failed with 1 replica, 5 with 2; a drain " +
			"of 2 replicas 406 over 33.8 s)", "make bench-disruption"}
}
