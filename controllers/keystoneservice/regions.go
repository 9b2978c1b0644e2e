package keystoneservice

import (
	"context"
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
// sooner). A KeystoneService it sees for the first time is woken too: what changed between
// its round and that look is not known.
type regionWatch struct {
	r        *Reconciler
	interval time.Duration
	events   chan event.GenericEvent
	seen     map[types.UID]string
	// failed is, by namespace, why its Keystone could not be read at the last look.
	failed map[string]string
}

func newRegionWatch(r *Reconciler) *regionWatch {
	interval := r.RegionRecheck
	if interval <= 0 {
		interval = DefaultRegionRecheck
	}
	return &regionWatch{r: r, interval: interval, events: make(chan event.GenericEvent), seen: map[types.UID]string{},
		failed: map[string]string{}}
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
			spec := svc.Spec
			now := records["service/"+spec.ServiceType+"/"+spec.ServiceName] + "\n" + records[identity.UserRecord(spec.ServiceUser)] + "\n" +
				records[identity.TypeRecord(spec.ServiceType)]
			if before, looked := w.seen[svc.UID]; !looked || before != now {
				select {
				case w.events <- event.GenericEvent{Object: svc}:
				case <-ctx.Done():
					return
				}
			}
			w.seen[svc.UID] = now
		}
	}
	for uid := range w.seen {
		if !alive[uid] {
			delete(w.seen, uid)
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
