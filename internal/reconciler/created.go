package reconciler

import (
	"context"
	"sync"

	"github.com/keystone-stepwise/keystone-operator/internal/permissions"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// What a round created and deleted, for status.relatedObjects: the cache sees an
// object a phase created or deleted only a moment later, and a round that listed it
// only then would write its status twice, the second time after Ready (the round that
// made it Ready would not be its last write).

type createdKey struct{}

// created records the objects a round created (their UIDs) and deleted, by kind,
// namespace and name.
type created struct {
	mu      sync.Mutex
	uids    map[string]types.UID
	deleted map[string]bool
}

// withCreated returns ctx carrying a record of what is created with it (by a
// RecordingClient).
func withCreated(ctx context.Context) context.Context {
	return context.WithValue(ctx, createdKey{}, &created{uids: map[string]types.UID{}, deleted: map[string]bool{}})
}

// recorded says what the round of ctx did to the object of key: the UID of the object
// it created ("" for none), or that it deleted it.
func recorded(ctx context.Context, key string) (uid types.UID, deleted bool) {
	rec, _ := ctx.Value(createdKey{}).(*created)
	if rec == nil {
		return "", false
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.uids[key], rec.deleted[key]
}

// record notes in the round of ctx that obj was created (with its UID) or deleted.
func (c RecordingClient) record(ctx context.Context, obj client.Object, deleted bool) {
	rec, _ := ctx.Value(createdKey{}).(*created)
	if rec == nil {
		return
	}
	gvk, err := apiutil.GVKForObject(obj, c.Scheme())
	if err != nil {
		return
	}
	key := kindKey(gvk, obj)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if deleted {
		delete(rec.uids, key)
		rec.deleted[key] = true
		return
	}
	delete(rec.deleted, key)
	rec.uids[key] = obj.GetUID()
}

// RecordingClient is a client that records, in the round of the context it is given,
// every object it creates or deletes (Reconciler.Reconcile's context carries the
// record): Related then lists them, or leaves them out, before the cache has caught
// up. What the client it wraps may do (permissions.Allower) it says unchanged.
type RecordingClient struct{ client.Client }

// AllowsOn is the wrapped client's answer (permissions.AllowsOn): the callers that ask
// before a write still ask for nothing they would be refused.
func (c RecordingClient) AllowsOn(verb string, obj client.Object) bool {
	return permissions.AllowsOn(c.Client, verb, obj)
}

// Allows is the wrapped client's answer (permissions.Allows).
func (c RecordingClient) Allows(verb, group, resource string, names ...string) bool {
	return permissions.Allows(c.Client, verb, group, resource, names...)
}

// Create creates obj and records it.
func (c RecordingClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if err := c.Client.Create(ctx, obj, opts...); err != nil {
		return err
	}
	c.record(ctx, obj, false)
	return nil
}

// Delete deletes obj and records it (gone already counts).
func (c RecordingClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	err := c.Client.Delete(ctx, obj, opts...)
	if client.IgnoreNotFound(err) == nil {
		c.record(ctx, obj, true)
	}
	return err
}

// kindKey names obj, of kind gvk, by its kind, namespace and name.
func kindKey(gvk schema.GroupVersionKind, obj client.Object) string {
	return gvk.String() + "/" + obj.GetNamespace() + "/" + obj.GetName()
}
