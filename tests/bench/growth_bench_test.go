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

	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"golang.org/x/sync/errgroup"
)

// requestTimer times requests by requestKind.
type requestTimer struct {
	mu sync.Mutex
	d  map[string][]time.Duration
}

func (t *requestTimer) RoundTrip(req *http.Request) (*http.Response, error) {
	key := requestKind(req)
	start := time.Now()
	resp, err := keystoneTransport.RoundTrip(req)
	elapsed := time.Since(start)
	t.mu.Lock()
	t.d[key] = append(t.d[key], elapsed)
	t.mu.Unlock()
	return resp, err
}

// take returns the number of requests timed since the last take, and the median
// latency in milliseconds of each kind named.
func (t *requestTimer) take(kinds ...string) (int, []float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	total := 0
	for _, d := range t.d {
		total += len(d)
	}
	medians := make([]float64, len(kinds))
	for i, k := range kinds {
		d := t.d[k]
		sort.Slice(d, func(a, b int) bool { return d[a] < d[b] })
		if len(d) > 0 {
			medians[i] = float64(d[len(d)/2].Microseconds()) / 1000
		}
	}
	t.d = map[string][]time.Duration{}
	return total, medians
}

// TestKeystoneGrowth: row 5b, what a Keystone costs per request as it holds more
// services. The identity client alone (no operator, no Kubernetes) registers batches of
// 100 services as a KeystoneService and its KeystoneEndpoint would (service, two
// endpoints, user, two role assignments), 4 at a time, into one Keystone that hashes
// passwords with its default; after each batch it reports Keystone's processor time per
// request and the median latency of the request kinds that grow.
func TestKeystoneGrowth(t *testing.T) {
	ctx := context.Background()
	const batches, perBatch, workers = 4, 100, 4
	const password = "bench-admin-secret"
	dir, err := os.MkdirTemp("", "bench-growth-")
	must(err)
	defer func() { _ = os.RemoveAll(dir) }()
	stack := productionKeystone(ctx, t, dir, password)
	defer stack.Stop()

	timer := &requestTimer{d: map[string][]time.Duration{}}
	clients := &identity.Clients{Timeout: 30 * time.Second, Transport: timer}
	kc, err := clients.Get(ctx, identity.Credentials{URL: stack.Keystone.URL(), User: "admin", Password: password, Project: "admin", Domain: "Default"})
	must(err)
	projectID, _, err := kc.EnsureProject(ctx, "default", "service")
	must(err)
	roles, _, err := kc.EnsureRoles(ctx, []string{"admin", "service"}, true)
	must(err)
	roleIDs := []string{roles["admin"], roles["service"]}
	register := func(name string) error {
		owner := "bench/" + name
		svc, _, err := kc.EnsureService(ctx, "", identity.ServiceSpec{Type: "type-" + name, Name: name, Enabled: true, Owner: owner})
		if err != nil {
			return err
		}
		if _, _, err = kc.EnsureEndpoints(ctx, identity.EndpointSet{ServiceID: svc.ID, Region: "regionOne", Owner: owner,
			URLs: map[string]string{"public": "https://" + name + ".example.com", "internal": "http://" + name + ":9292"}}); err != nil {
			return err
		}
		user, _, err := kc.EnsureUser(ctx, identity.UserSpec{Name: "user-" + name, DomainID: "default", ProjectID: projectID,
			Password: "bench-service", PasswordFrom: "bench", Owner: owner})
		if err != nil {
			return err
		}
		_, err = kc.EnsureAssignments(ctx, identity.AssignmentSpec{UserID: user.ID, ProjectID: projectID, RoleIDs: roleIDs, Exclusive: true, NewUser: true})
		return err
	}
	kinds := []string{"GET /v3/endpoints", "POST /v3/endpoints", "GET /v3/users", "PUT /v3/projects"}
	timer.take()
	var perRequest []string
	for b := 0; b < batches; b++ {
		cpuBefore, err := stack.Keystone.CPU()
		must(err)
		var g errgroup.Group
		g.SetLimit(workers)
		for i := 0; i < perBatch; i++ {
			name := fmt.Sprintf("svc%04d", b*perBatch+i)
			g.Go(func() error { return register(name) })
		}
		must(g.Wait())
		cpuAfter, err := stack.Keystone.CPU()
		must(err)
		requests, medians := timer.take(kinds...)
		cpu := 1000 * (cpuAfter - cpuBefore).Seconds() / float64(requests)
		var latencies []string
		for i, k := range kinds {
			latencies = append(latencies, fmt.Sprintf("%s %.0f", k, medians[i]))
		}
		t.Logf("holding %d services: Keystone used %.1f ms of processor time per request (%d requests); median ms: %s",
			(b+1)*perBatch, cpu, requests, strings.Join(latencies, ", "))
		perRequest = append(perRequest, fmt.Sprintf("%d: %.0f ms (median ms %s)", (b+1)*perBatch, cpu, strings.Join(latencies, ", ")))
	}
	rows = append(rows, row{"5b",
		fmt.Sprintf("Keystone's own cost as it grows: %d services registered in batches of %d by the identity client alone (no operator), %d at a time, "+
			"into one Keystone hashing passwords with its default", batches*perBatch, perBatch, workers),
		"Keystone's processor time per request after each batch, by services held: " + strings.Join(perRequest, "; "),
		"— (what a larger Keystone costs row 5)", "—", "make bench BENCH_RUN=TestKeystoneGrowth"})
}
