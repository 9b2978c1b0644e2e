package keystoneservice

import (
	"context"
	"strings"
	"sync"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/access"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

// DefaultRegionRecheck is how often, by default, the operator reads in each Keystone
// the owners' records of its services and users (regionWatch).
const DefaultRegionRecheck = time.Minute

// regionWatch stands in for a watch of Keystone, which has none: every interval it reads
// the co-owners' records in each Keystone the namespaces with KeystoneServices register
// in (two listings per Keystone, identity.Records), and wakes each KeystoneService whose
// service's (by type and name) or user's record changed since its previous look. That is
// what other clusters sharing the Keystone do: another region joining, leaving, handing
// over, changing its roles or the password, or a record lost to two regions writing at
// once; and a service of its type coming or going (one refused a second service of a
// type goes on once the first is gone; when this cluster's let go, wakeRefused wakes it
// sooner). A round that ends Ready leaves what it read (leave): the next look compares
// with that instead of its previous read, so that what the round wrote or read since
// does not wake it again. A KeystoneService it sees for the first time without such a
// record is woken too: what changed between its round and that look is not known.
type regionWatch struct {
	r        *Reconciler
	interval time.Duration
	events   chan event.GenericEvent
	seen     map[types.UID]string
	// failed is, by namespace, why its Keystone could not be read at the last look.
	failed map[string]string

	mu sync.Mutex
	// left is, by KeystoneService, the fingerprint of the records its last round saw
	// (leave) since the last look that came to it, and when it was left.
	left map[types.UID]leftRecords
}

// leftRecords is a fingerprint a round left (leave), and when. typeAlone: of the type
// group, it holds the KeystoneService's type alone (fingerprintOf).
type leftRecords struct {
	fingerprint string
	typeAlone   bool
	at          time.Time
}

func newRegionWatch(r *Reconciler) *regionWatch {
	interval := r.RegionRecheck
	if interval <= 0 {
		interval = DefaultRegionRecheck
	}
	return &regionWatch{r: r, interval: interval, events: make(chan event.GenericEvent), seen: map[types.UID]string{},
		failed: map[string]string{}, left: map[types.UID]leftRecords{}}
}

// fingerprint is what a look compares of svc between two looks: its service's record
// (by type and name), its user's, and its type group's, in records (Records' keys).
func fingerprint(records map[string]string, spec keystonev1.KeystoneServiceSpec) string {
	return fingerprintOf(records, spec, false)
}

// fingerprintOf is fingerprint, of the type group's services only those of spec's type
// when typeAlone: what a round that lists its type alone (it knows its service) sees of
// the group, and decides from (share's round does not read sharev2).
func fingerprintOf(records map[string]string, spec keystonev1.KeystoneServiceSpec, typeAlone bool) string {
	group := records[identity.TypeRecord(spec.ServiceType)]
	if typeAlone {
		var ofType []string
		for _, line := range strings.SplitAfter(group, "\n") {
			// "<ID> <type> <name> <keeper>\n" (identity.Records)
			if fields := strings.SplitN(line, " ", 3); len(fields) == 3 && fields[1] == spec.ServiceType {
				ofType = append(ofType, line)
			}
		}
		group = strings.Join(ofType, "")
	}
	return records["service/"+spec.ServiceType+"/"+spec.ServiceName] + "\n" + records[identity.UserRecord(spec.ServiceUser)] + "\n" + group
}

// leave gives the watch what a round of the KeystoneService uid that ended Ready saw in
// Keystone (its records: identity.Seen). The next look that comes to it compares what
// it reads with that instead of its own previous read: a change since the round's reads
// shows, and what the round itself wrote, or read after that previous look, does not
// wake it for one more round. Without it, a look wakes every KeystoneService it sees for
// the first time (what changed since its round is not known).
func (w *regionWatch) leave(uid types.UID, seen *identity.Seen, spec keystonev1.KeystoneServiceSpec) {
	records, ok := seen.Records()
	if !ok {
		return
	}
	typeAlone := !seen.WholeGroup()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.left[uid] = leftRecords{fingerprint: fingerprintOf(records, spec, typeAlone), typeAlone: typeAlone, at: time.Now()}
}

// roundStarts drops what an earlier round of uid left: only the last round's reads may
// stand for what the KeystoneService decided from.
func (w *regionWatch) roundStarts(uid types.UID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.left, uid)
}

// baseline is what the last round of uid left since the last look that came to it, if
// any; it is consumed.
func (w *regionWatch) baseline(uid types.UID) (leftRecords, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	left, ok := w.left[uid]
	delete(w.left, uid)
	return left, ok
}

// Start looks every interval until ctx ends (a manager Runnable; it runs on the leader).
func (w *regionWatch) Start(ctx context.Context) error {
	ticker := time.NewTicker(w.interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
			w.look(ctx)
		}
	}
}

// look reads each Keystone once and wakes the KeystoneServices whose records changed.
// A Keystone it cannot read now is read at the next look; the failure is logged when it
// starts and when it changes (the KeystoneServices' own rounds reach the same Keystone
// and say in their conditions why they cannot).
func (w *regionWatch) look(ctx context.Context) {
	log := ctrl.LoggerFrom(ctx).WithName("regions")
	started := time.Now()
	list := &keystonev1.KeystoneServiceList{}
	if err := w.r.List(ctx, list); err != nil {
		log.Info("cannot list KeystoneServices; looking again later", "error", err.Error())
		return
	}
	byNamespace := map[string][]*keystonev1.KeystoneService{}
	for i := range list.Items {
		svc := &list.Items[i]
		byNamespace[svc.Namespace] = append(byNamespace[svc.Namespace], svc)
	}
	read := map[string]map[string]string{} // by Keystone and admin: one read each per look
	alive := map[types.UID]bool{}
	for ns, services := range byNamespace {
		records, err := w.records(ctx, ns, read)
		if msg := errorText(err); msg != w.failed[ns] {
			if msg != "" {
				log.Info("cannot read the owners' records in Keystone; what other clusters change waits for the next look",
					"namespace", ns, "error", msg)
			}
			w.failed[ns] = msg
		}
		for _, svc := range services {
			alive[svc.UID] = true
			if records == nil {
				continue
			}
			if w.changed(svc, records) {
				select {
				case w.events <- event.GenericEvent{Object: svc}:
				case <-ctx.Done():
					return
				}
			}
		}
	}
	w.forgetGone(alive, started)
}

// changed tells whether records differ, for svc, from what its last round left
// (leave), else from the previous look's, and keeps them for the next look; true for a
// KeystoneService seen for the first time without what its round left.
func (w *regionWatch) changed(svc *keystonev1.KeystoneService, records map[string]string) bool {
	now := fingerprint(records, svc.Spec)
	before, looked := w.seen[svc.UID]
	w.seen[svc.UID] = now
	if left, ok := w.baseline(svc.UID); ok {
		return left.fingerprint != fingerprintOf(records, svc.Spec, left.typeAlone)
	}
	return !looked || before != now
}

// forgetGone drops what the watch keeps of the KeystoneServices not alive in a look
// that started at started; of what a round left, only before then (one created since
// that look's listing keeps it for the next).
func (w *regionWatch) forgetGone(alive map[types.UID]bool, started time.Time) {
	for uid := range w.seen {
		if !alive[uid] {
			delete(w.seen, uid)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for uid, left := range w.left {
		if !alive[uid] && left.at.Before(started) {
			delete(w.left, uid)
		}
	}
}

// errorText is err's message, "" for none.
func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// records reads the co-owners' records in the Keystone of namespace ns's KeystoneAPI,
// once per Keystone and admin in a look (read); nil when it has none, no endpoint or no
// admin password yet.
func (w *regionWatch) records(ctx context.Context, ns string, read map[string]map[string]string) (map[string]string, error) {
	api, err := access.Lookup(ctx, w.r.Client, ns)
	if err != nil || api == nil || api.Status.APIEndpoints[keystonev1.EndpointInternal] == "" {
		// None, or not reachable yet: nothing to read.
		return nil, err
	}
	creds, ok, err := access.Credentials(ctx, w.r.Client, api)
	if err != nil || !ok {
		return nil, err
	}
	key := creds.URL + " " + creds.User
	if records, done := read[key]; done {
		return records, nil
	}
	kc, err := w.r.Keystone.Get(ctx, creds)
	if err != nil {
		return nil, err
	}
	records, err := kc.Records(ctx)
	if err != nil {
		return nil, err
	}
	read[key] = records
	return records, nil
}
