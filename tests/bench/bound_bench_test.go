//go:build bench

package bench

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/cmd/manager"
	"github.com/keystone-stepwise/keystone-operator/controllers/registration"
	"github.com/keystone-stepwise/keystone-operator/internal/finalizers"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// finalStates is what the operator left when row 9's registrations had converged: each
// KeystoneService's and KeystoneEndpoint's finalizers and status, keyed by the index of
// its namespace and its name, and each KeystoneAPI's, by the index of its namespace.
// Row 13's bare client writes the same.
type finalStates struct {
	apis      map[int]*keystonev1.KeystoneAPI
	services  map[string]*keystonev1.KeystoneService
	endpoints map[string]*keystonev1.KeystoneEndpoint
}

// finalKey names a registration independently of its namespace's name, which differs
// from run to run.
func finalKey(index int, name string) string { return fmt.Sprintf("%d/%s", index, name) }

// readFinalStates lists what the operator left in namespaces.
func readFinalStates(ctx context.Context, namespaces []string) *finalStates {
	f := &finalStates{apis: map[int]*keystonev1.KeystoneAPI{}, services: map[string]*keystonev1.KeystoneService{},
		endpoints: map[string]*keystonev1.KeystoneEndpoint{}}
	for i, ns := range namespaces {
		api := &keystonev1.KeystoneAPI{}
		must(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "keystone"}, api))
		f.apis[i] = api
		services := &keystonev1.KeystoneServiceList{}
		must(c.List(ctx, services, client.InNamespace(ns)))
		for j := range services.Items {
			f.services[finalKey(i, services.Items[j].Name)] = &services.Items[j]
		}
		endpoints := &keystonev1.KeystoneEndpointList{}
		must(c.List(ctx, endpoints, client.InNamespace(ns)))
		for j := range endpoints.Items {
			f.endpoints[finalKey(i, endpoints.Items[j].Name)] = &endpoints.Items[j]
		}
	}
	return f
}

// bareRun is row 13's bound for one of row 9's runs: on a control plane of its own, the
// same namespaces, KeystoneAPIs and registrations created the same way (8 clients at
// once), and a bare client in place of the operator, which makes the writes the operator
// makes (docs/benchmarks.md, row 9) and nothing else: woken by a watch
// (controller-runtime's cache, the operator's workers per kind), it adds each
// KeystoneService's finalizer with its record (one patch) and its finalizer on the
// KeystoneAPI, writes its final status; adds each KeystoneEndpoint's finalizer, writes a
// first status while its KeystoneService is not Ready, then its finalizer on the
// KeystoneService and its final status; one Event with each final status; each
// KeystoneAPI's view once, after its namespace's last registration. Finalizers go through
// internal/finalizers, as the operator's (a patch of the list with an optimistic lock,
// retried on a conflict). It calls no Keystone and decides nothing. Its client has the
// operator's rate limits (manager.RateLimited: 200 requests a second, burst 400). It
// returns the time from the first create until every registration was Ready, as row 9
// measures it, and the processor time the API server, etcd and the bench process (the
// bare client, its watch) used meanwhile, with the host's speed (cpuUse).
//
// With load > 0, a process keeps that share of one processor busy meanwhile (startLoad):
// row 9's manager's, which competes with the API server for the 2 cores as the bare
// client does not. Its processor time is shown, not summed.
func bareRun(t *testing.T, root string, n, apis int, final *finalStates, load float64) (time.Duration, cpuUse) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	run := newProcessRun(t, root, false)
	defer run.stop()
	namespaces := make([]string, apis)
	index := map[string]int{}
	for i := range namespaces {
		ns := namespace(ctx, false)
		namespaces[i], index[ns] = ns, i
		api := externalKeystoneAPI(ctx, ns, "http://127.0.0.1:9/none", "bench-admin")
		// Ready before the registrations come, as the operator's were; the view of the
		// registrations comes with the namespace's last.
		before := api.DeepCopy()
		api.Status = *final.apis[i].Status.DeepCopy()
		api.Status.Registrations = nil
		must(c.Status().Patch(ctx, api, client.MergeFrom(before)))
	}

	// A client of its own, as the operator's process is: the API server names the
	// manager of each field it writes by the user agent (managedFields), and the
	// creates' client is the bench's.
	cfg := manager.RateLimited(run.cfg, manager.Options{})
	cfg.UserAgent = "bare-client"
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: manager.Scheme,
		Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Cache:      cache.Options{DefaultTransform: cache.TransformStripManagedFields()},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)}})
	must(err)
	w := &bareWriter{c: mgr.GetClient(), events: mgr.GetEventRecorderFor("bare"), index: index, final: final,
		left: make([]atomic.Int32, apis)}
	for i := 0; i < n; i++ {
		w.left[i%apis].Add(2) // a KeystoneService and a KeystoneEndpoint where createAll puts registration i
	}
	workers := controller.Options{MaxConcurrentReconciles: registration.Concurrency(0)}
	must(ctrl.NewControllerManagedBy(mgr).Named("bare-keystoneservice").For(&keystonev1.KeystoneService{}).
		WithOptions(workers).Complete(reconcile.Func(w.service)))
	must(ctrl.NewControllerManagedBy(mgr).Named("bare-keystoneendpoint").For(&keystonev1.KeystoneEndpoint{}).
		Watches(&keystonev1.KeystoneService{}, handler.EnqueueRequestsFromMapFunc(
			func(_ context.Context, o client.Object) []reconcile.Request {
				return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(o)}} // the endpoint of the same name
			})).
		WithOptions(workers).Complete(reconcile.Func(w.endpoint)))
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("the bare client's cache did not sync")
	}

	ready := watchReady(ctx, "")
	defer ready.Stop()
	pids := childrenNamed("kube-apiserver", "etcd")
	pids["bench"] = os.Getpid() // the bare client, in the bench process
	// Read before the processor time's window: reading it is not the run's work.
	before := apiserverRequests(run.cfg)
	who, suffix := "bare client", ".bare"
	if load > 0 {
		pid, stop := startLoad(load)
		defer stop()
		pids["load"] = pid
		who, suffix = fmt.Sprintf("bare client beside a load of %.2f processors", load), ".bare-load"
	}
	cpu := cpuShares(t, pids)
	start := time.Now()
	profiled, benchProfiled := profileAPIServer(run.cfg, suffix), profileBench(suffix)
	createAll(ctx, namespaces, n)
	for ready.Count() < n {
		if time.Since(start) > 10*time.Minute {
			t.Fatalf("%s: only %d of %d registrations Ready after 10 minutes", who, ready.Count(), n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	took := time.Since(start)
	used := cpu()
	after := apiserverRequests(run.cfg) // at the last Ready, as row 9's run reads its own
	profiled()
	benchProfiled()
	t.Logf("%s: all Ready in %.1f s; processor time meanwhile: %s", who, took.Seconds(), used.text)
	if got := used.processors["load"]; load > 0 && got < 0.8*load {
		t.Fatalf("%s: the load used only %.2f processors: the run is not beside the manager's share", who, got)
	}
	t.Logf("%s: mutating requests the API server answered meanwhile, per registration: %s", who,
		perItem(after.writes, before.writes, n, ""))
	t.Logf("%s: seconds the API server spent answering them (latency, not processor time), per registration: %s", who,
		perItem(after.seconds, before.seconds, n, " s"))
	t.Logf("%s: reads the API server answered meanwhile, per registration: %s", who, perItem(after.reads, before.reads, n, ""))
	if err := w.failed.Load(); err != nil {
		t.Fatalf("%s: %v", who, *err)
	}
	cancel()
	must(<-done)
	return took, used
}

// joinFloats formats xs with format, separated by commas.
func joinFloats(xs []float64, format string) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf(format, x)
	}
	return strings.Join(parts, ", ")
}

// createAll creates n registrations spread over namespaces, by 8 clients at once, as
// row 9 does.
func createAll(ctx context.Context, namespaces []string, n int) {
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				createRegistration(ctx, namespaces[i%len(namespaces)], fmt.Sprintf("svc%04d", i))
			}
		}()
	}
	wg.Wait()
}

// bareWriter is row 13's bare client.
type bareWriter struct {
	c      client.Client
	events record.EventRecorder
	index  map[string]int
	final  *finalStates
	// left counts, per namespace index, the registrations whose final status is not
	// yet written; finished holds those whose is, waited the endpoints that wrote their
	// first status.
	left             []atomic.Int32
	finished, waited sync.Map
	failed           atomic.Pointer[error]
}

// service makes a KeystoneService's writes.
func (w *bareWriter) service(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ks := &keystonev1.KeystoneService{}
	if err := w.c.Get(ctx, req.NamespacedName, ks); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	want, ok := w.final.services[finalKey(w.index[req.Namespace], req.Name)]
	if !ok {
		return reconcile.Result{}, fmt.Errorf("no final state for KeystoneService %s", req)
	}
	hold := finalizers.For("keystoneendpoint", ks.Name) // its endpoint's, added by the endpoint
	for _, f := range want.Finalizers {
		if f != hold {
			if err := finalizers.AddRecording(ctx, w.c, ks, f, want.Annotations); err != nil {
				return reconcile.Result{}, err
			}
		}
	}
	api := &keystonev1.KeystoneAPI{}
	if err := w.c.Get(ctx, client.ObjectKey{Namespace: req.Namespace, Name: "keystone"}, api); err != nil {
		return reconcile.Result{}, err
	}
	if err := finalizers.Add(ctx, w.c, api, finalizers.For("keystoneservice", ks.Name)); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, w.finish(ctx, req, ks, &ks.Status, &want.Status)
}

// endpoint makes a KeystoneEndpoint's writes.
func (w *bareWriter) endpoint(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ep := &keystonev1.KeystoneEndpoint{}
	if err := w.c.Get(ctx, req.NamespacedName, ep); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	want, ok := w.final.endpoints[finalKey(w.index[req.Namespace], req.Name)]
	if !ok {
		return reconcile.Result{}, fmt.Errorf("no final state for KeystoneEndpoint %s", req)
	}
	for _, f := range want.Finalizers {
		if err := finalizers.Add(ctx, w.c, ep, f); err != nil {
			return reconcile.Result{}, err
		}
	}
	ks := &keystonev1.KeystoneService{}
	if err := w.c.Get(ctx, req.NamespacedName, ks); client.IgnoreNotFound(err) != nil {
		return reconcile.Result{}, err
	}
	if !ks.IsReady() {
		// The first status: waiting for the KeystoneService (the service's watch wakes it).
		if _, again := w.waited.LoadOrStore(req.String(), true); !again {
			base := ep.DeepCopy()
			ep.Status = *want.Status.DeepCopy()
			ep.Status.Conditions.MarkFalse(lc.ReadyCondition, lc.RequestedReason, lc.SeverityInfo, "waiting for the KeystoneService")
			return reconcile.Result{}, w.c.Status().Patch(ctx, ep, client.MergeFrom(base))
		}
		return reconcile.Result{}, nil
	}
	if err := finalizers.Add(ctx, w.c, ks, finalizers.For("keystoneendpoint", ep.Name)); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, w.finish(ctx, req, ep, &ep.Status, &want.Status)
}

// finish writes obj's final status (status, of obj, is set to want) with an Event, once;
// the namespace's last registration finished writes its KeystoneAPI's view.
func (w *bareWriter) finish(ctx context.Context, req reconcile.Request, obj client.Object, status, want any) error {
	key := fmt.Sprintf("%T/%s", obj, req)
	if _, done := w.finished.Load(key); done {
		return nil
	}
	base := obj.DeepCopyObject().(client.Object)
	switch s := status.(type) {
	case *keystonev1.KeystoneServiceStatus:
		*s = *want.(*keystonev1.KeystoneServiceStatus).DeepCopy()
	case *keystonev1.KeystoneEndpointStatus:
		*s = *want.(*keystonev1.KeystoneEndpointStatus).DeepCopy()
	}
	if err := w.c.Status().Patch(ctx, obj, client.MergeFrom(base)); err != nil {
		return err
	}
	w.events.Event(obj, "Normal", "Ready", "all steps ready")
	w.finished.Store(key, true)
	i := w.index[req.Namespace]
	if w.left[i].Add(-1) == 0 {
		if err := w.writeAPI(ctx, req.Namespace, w.final.apis[i]); err != nil {
			w.failed.Store(&err)
			return err
		}
	}
	return nil
}

// writeAPI leaves the KeystoneAPI of ns with want's status.
func (w *bareWriter) writeAPI(ctx context.Context, ns string, want *keystonev1.KeystoneAPI) error {
	api := &keystonev1.KeystoneAPI{}
	if err := w.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "keystone"}, api); err != nil {
		return err
	}
	base := api.DeepCopy()
	api.Status = *want.Status.DeepCopy()
	return w.c.Status().Patch(ctx, api, client.MergeFrom(base))
}
