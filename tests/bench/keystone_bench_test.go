//go:build bench

package bench

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/tests/support/localkeystone"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// keystoneRequests counts the operator's requests to Keystone by "METHOD /v3/<kind>".
type keystoneRequests struct {
	mu sync.Mutex
	n  map[string]int
}

var keystoneCounter = &keystoneRequests{n: map[string]int{}}

// keystoneTransport carries the in-process managers' requests to Keystone, as the
// manager's own default (identity.NewTransport) does, under the counting and timing.
var keystoneTransport = identity.NewTransport()

// requestKind names a Keystone request by "METHOD /v3/<kind>" (a role assignment, PUT
// /v3/projects/.../roles/..., is "PUT /v3/projects").
func requestKind(req *http.Request) string {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	return req.Method + " /" + strings.Join(parts[:min(len(parts), 2)], "/")
}

func (k *keystoneRequests) RoundTrip(req *http.Request) (*http.Response, error) {
	key := requestKind(req)
	k.mu.Lock()
	k.n[key]++
	k.mu.Unlock()
	return keystoneTransport.RoundTrip(req)
}

func (k *keystoneRequests) snapshot() map[string]int {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := map[string]int{}
	for key, v := range k.n {
		out[key] = v
	}
	return out
}

func diff(after, before map[string]int) (map[string]int, int) {
	out, total := map[string]int{}, 0
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			out[k] = d
			total += d
		}
	}
	return out, total
}

func perService(counts map[string]int, n int) string {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.2f", k, float64(counts[k])/float64(n)))
	}
	return strings.Join(parts, ", ")
}

// TestRealKeystone: rows 5 (registration throughput) and 6 (resync cost) against
// Debian's Keystone on 127.0.0.1, hashing passwords as a production Keystone does; 3
// rounds of 200 services, each into a Keystone of its own, so that every round
// measures the same thing (row 5b shows what a Keystone that already holds hundreds
// of services costs per request).
func TestRealKeystone(t *testing.T) {
	ctx := context.Background()
	const rounds, n = 3, 200
	const password = "bench-admin-secret"
	var secs, perNew, once, perResync, auths, cpuPerRequest, busy []float64
	var firstCreated, firstResync map[string]int
	for r := 0; r < rounds; r++ {
		res := func() roundResult {
			dir, err := os.MkdirTemp("", "bench-keystone-")
			must(err)
			defer func() { _ = os.RemoveAll(dir) }()
			stack := productionKeystone(ctx, t, dir, password)
			// Stopped also when the round fails (t.Fatalf ends it through its defers).
			defer stack.Stop()
			return registrationRound(t, stack.Keystone.URL(), password, r, n, func() time.Duration {
				cpu, err := stack.Keystone.CPU()
				must(err)
				return cpu
			})
		}()
		// Keystone's processor time while the round registered, per request it answered.
		cpu := res.keystoneCPU.Seconds()
		cpuPerRequest = append(cpuPerRequest, 1000*cpu/float64(res.createdTotal))
		busy = append(busy, cpu/res.elapsed.Seconds())
		secs = append(secs, res.elapsed.Seconds())
		perKeystone := oncePerKeystone(res.created)
		once = append(once, float64(perKeystone))
		perNew = append(perNew, float64(res.createdTotal-perKeystone)/n)
		perResync = append(perResync, float64(res.resyncTotal)/n)
		auths = append(auths, float64(res.created["POST /v3/auth"]))
		t.Logf("round %d: all Ready in %.1f s; %.2f Keystone requests per service and %.0f once for the Keystone; Keystone used %.0f ms of processor time per request, %.2f processors",
			r+1, secs[r], perNew[r], once[r], cpuPerRequest[r], busy[r])
		if r == 0 {
			firstCreated, firstResync = res.created, res.resync
		}
	}
	rows = append(rows,
		row{"5", fmt.Sprintf("registration against the real Keystone: %d KeystoneServices with two endpoints each, created at once into a Keystone of their own "+
			"(hashing passwords with its default, bcrypt at 12 rounds); %d rounds", n, rounds),
			fmt.Sprintf("all Ready in median %.1f s (min %.1f, max %.1f); median %.2f Keystone requests per service, and %.0f once per Keystone (the service project, "+
				"the roles and authentication, looked up by the first registrations at once) (first round, all requests per service: %s); median %.0f authentications per round; "+
				"Keystone (%d uwsgi processes) used median %.0f ms of processor time per request, %.2f processors on average while the round registered",
				median(secs), minOf(secs), maxOf(secs), median(perNew), median(once), perService(firstCreated, n), median(auths),
				localkeystone.Processes(), median(cpuPerRequest), median(busy)),
			"≤ 9 requests per new service; 1 authentication per token lifetime; all Ready in ≤ 60 s",
			"not measurable", "make bench BENCH_RUN=TestRealKeystone"},
		row{"6", fmt.Sprintf("resync against the real Keystone: one forced reconcile of each of the %d converged services; %d rounds", n, rounds),
			fmt.Sprintf("median %.2f Keystone requests per converged service (first round: %s)", median(perResync), perService(firstResync, n)),
			"≤ 3 Keystone requests per converged service", "—", "make bench BENCH_RUN=TestRealKeystone"})
}

// productionKeystone starts Debian's Keystone under dir, with admin/admin in regionOne,
// hashing passwords as a production Keystone does.
func productionKeystone(ctx context.Context, t *testing.T, dir, adminPassword string) *localkeystone.Stack {
	t.Helper()
	spec := keystoneAPI("stack")
	spec.Spec.Region, spec.Spec.AdminUser, spec.Spec.AdminProject = "regionOne", "admin", "admin"
	spec.Spec.FernetMaxActiveKeys = ptr.To[int32](5)
	stack, err := localkeystone.StartStack(ctx, dir, spec, adminPassword, localkeystone.ProductionHashing())
	if err != nil {
		t.Fatal(err)
	}
	return stack
}

// oncePerKeystone counts the requests a Keystone costs once, not per service: the
// service project's and the roles' look-ups and creates, and authentication. Role
// assignments (PUT /v3/projects/...) are per service.
func oncePerKeystone(counts map[string]int) int {
	n := 0
	for _, kind := range []string{"GET /v3/projects", "POST /v3/projects", "GET /v3/roles", "POST /v3/roles", "POST /v3/auth"} {
		n += counts[kind]
	}
	return n
}

type roundResult struct {
	elapsed                   time.Duration
	created, resync           map[string]int
	createdTotal, resyncTotal int
	// keystoneCPU is the processor time Keystone used from the first create until all were Ready.
	keystoneCPU time.Duration
}

// registrationRound registers n KeystoneServices through an external KeystoneAPI at
// url, then forces one reconcile of each, counting the operator's Keystone requests.
func registrationRound(t *testing.T, url, password string, round, n int, keystoneCPU func() time.Duration) roundResult {
	ctx := context.Background()
	ns := namespace(ctx, false)
	api := externalKeystoneAPI(ctx, ns, url, password)
	for !isReady(ctx, client.ObjectKeyFromObject(api), &keystonev1.KeystoneAPI{}) {
		time.Sleep(50 * time.Millisecond)
	}
	var res roundResult
	before := keystoneCounter.snapshot()
	cpuBefore := keystoneCPU()
	ready := watchReady(ctx, ns)
	defer ready.Stop()
	start := time.Now()
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("r%d-svc%03d", round, i)
		createRegistration(ctx, ns, name)
	}
	for ready.Count() < n {
		if time.Since(start) > 10*time.Minute {
			t.Fatalf("only %d of %d KeystoneServices Ready after 10 minutes", ready.Count(), n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	res.elapsed = time.Since(start)
	res.keystoneCPU = keystoneCPU() - cpuBefore
	time.Sleep(2 * time.Second) // the last requests of the last services
	res.created, res.createdTotal = diff(keystoneCounter.snapshot(), before)

	time.Sleep(time.Second)
	before = keystoneCounter.snapshot()
	for i := 0; i < n; i++ {
		svc := &keystonev1.KeystoneService{}
		must(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("r%d-svc%03d", round, i)}, svc))
		patch := client.MergeFrom(svc.DeepCopy())
		metav1.SetMetaDataAnnotation(&svc.ObjectMeta, "bench/touch", "1")
		must(c.Patch(ctx, svc, patch))
	}
	// Wait until the forced reconciles are over: no new Keystone request for 3 s.
	quiet := keystoneCounter.snapshot()
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); {
		time.Sleep(3 * time.Second)
		now := keystoneCounter.snapshot()
		if _, moved := diff(now, quiet); moved == 0 {
			break
		}
		quiet = now
	}
	res.resync, res.resyncTotal = diff(keystoneCounter.snapshot(), before)
	return res
}

func isReady(ctx context.Context, key client.ObjectKey, api *keystonev1.KeystoneAPI) bool {
	return c.Get(ctx, key, api) == nil && api.IsReady()
}

// externalKeystoneAPI creates in ns the osp-secret (the admin's password, and
// ServicePassword for the registrations) and a KeystoneAPI in external mode at url.
func externalKeystoneAPI(ctx context.Context, ns, url, adminPassword string) *keystonev1.KeystoneAPI {
	must(c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "osp-secret", Namespace: ns},
		StringData: map[string]string{"AdminPassword": adminPassword, "ServicePassword": "bench-service"}}))
	api := keystoneAPI(ns)
	api.Spec.DatabaseInstance, api.Spec.ExternalKeystoneAPI = "", true
	api.Spec.Override.Service = &keystonev1.ServiceOverrides{
		Public:   &keystonev1.EndpointOverride{EndpointURL: ptr.To(url)},
		Internal: &keystonev1.EndpointOverride{EndpointURL: ptr.To(url)},
	}
	must(c.Create(ctx, api))
	return api
}

// createRegistration creates what a service operator creates for one service: a
// KeystoneService and its KeystoneEndpoint with two interfaces.
func createRegistration(ctx context.Context, ns, name string) {
	must(c.Create(ctx, &keystonev1.KeystoneService{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: keystonev1.KeystoneServiceSpec{ServiceType: "type-" + name, ServiceName: name, ServiceUser: "user-" + name,
			Secret: "osp-secret", PasswordSelector: "ServicePassword", Roles: []string{"admin", "service"}},
	}))
	must(c.Create(ctx, &keystonev1.KeystoneEndpoint{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: keystonev1.KeystoneEndpointSpec{ServiceName: name,
			Endpoints: map[string]string{"public": "https://" + name + ".example.com", "internal": "http://" + name + ":9292"}},
	}))
}
