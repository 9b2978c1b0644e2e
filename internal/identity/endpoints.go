package identity

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/endpoints"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/regions"
)

// OwnerAttribute is the extra attribute Keystone keeps on a service, user or endpoint
// this suite registered, naming who registered it (ownership.go). On an endpoint the
// mark survives a crash between a create and the status write that would have
// recorded the endpoint's ID: the next round finds its own endpoint instead of
// creating a second one, and never takes another's.
const OwnerAttribute = "keystone_operator_owner"

// Endpoint is an endpoint as Keystone lists it, with the owner mark.
type Endpoint struct {
	ID        string `json:"id"`
	Interface string `json:"interface"`
	Region    string `json:"region"`
	RegionID  string `json:"region_id"`
	URL       string `json:"url"`
	ServiceID string `json:"service_id"`
	Owner     string `json:"keystone_operator_owner"`
}

// region is the endpoint's region, whichever of the two fields Keystone filled.
func (e Endpoint) region() string {
	if e.RegionID != "" {
		return e.RegionID
	}
	return e.Region
}

// EndpointSet is what one owner registers for a service: URLs by interface, in a region.
type EndpointSet struct {
	ServiceID string
	Region    string
	// Owner marks the endpoints in Keystone (OwnerAttribute).
	Owner string
	// URLs by interface (public, internal, admin).
	URLs map[string]string
	// Known are the IDs recorded earlier, by interface: the owner's endpoints even when
	// they carry no mark (registered by keystone-operator before this suite took over),
	// never when they carry another's.
	Known map[string]string
	// Alone creates no endpoint of an interface where the service already has one of
	// that interface in the region that is not the owner's (EndpointBesideError), so
	// that a client never has two to take either of: under a service another registered
	// (adopted), whose endpoints are never rewritten.
	Alone bool
}

// EndpointBesideError is an endpoint EnsureEndpoints did not create (EndpointSet.Alone):
// the service has one of that interface in the region already, another's.
type EndpointBesideError struct {
	Interface, Region string
	Other             Endpoint
}

func (e *EndpointBesideError) Error() string {
	owner := "no mark"
	if e.Other.Owner != "" {
		owner = "registered by " + OwnerName(e.Other.Owner)
	}
	return fmt.Sprintf("the service has a %s endpoint in %s already (%s, %s; %s), which is never rewritten: a second "+
		"would leave clients to take either; remove it, or list this one there yourself", e.Interface, e.Region,
		e.Other.ID, e.Other.URL, owner)
}

// RegionExists tells whether Keystone has the region id.
func (c *Client) RegionExists(ctx context.Context, id string) (bool, error) {
	_, err := regions.Get(ctx, c.sc, id).Extract()
	switch {
	case notFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("reading region %s: %w", id, err)
	}
	return true, nil
}

// ServiceOwnership says how owner, a KeystoneService's mark, relates to the service with
// ID id (classify): endpoints go only under a service the owner's namespace registered
// (Owned: created or claimed; Joined: shared with its other regions), not under one it
// adopted unless its KeystoneAPI says so. A service EnsureService found registered so is
// not read again; another is read (nil when it is gone).
func (c *Client) ServiceOwnership(ctx context.Context, id, owner string) (*Service, Ownership, error) {
	if ownership, ok := c.registered.Load(registeredKey(id, owner)); ok {
		return &Service{ID: id}, ownership.(Ownership), nil
	}
	svc, err := c.getService(ctx, id)
	if err != nil || svc == nil {
		return nil, Foreign, err
	}
	ownership, _ := c.classify(svc.Owner, owner, false)
	if ownership == Owned || ownership == Joined {
		c.registered.Store(registeredKey(id, owner), ownership)
	}
	return svc, ownership, nil
}

// registeredKey is the key of Client.registered.
func registeredKey(id, owner string) string { return id + "\x00" + owner }

// ownedEndpoints lists the endpoints of the service (in full: listed) that belong to the
// set's owner: marked with it, or unmarked and recorded by ID (one another owner marked
// since is that owner's). A truncated list read as complete would make an endpoint it
// left out be registered again.
func (c *Client) ownedEndpoints(ctx context.Context, want EndpointSet) (owned, all []Endpoint, err error) {
	if err := c.listed(ctx, "endpoints", url.Values{"service_id": {want.ServiceID}}, &all); err != nil {
		return nil, nil, err
	}
	known := map[string]bool{}
	for _, id := range want.Known {
		known[id] = true
	}
	for _, e := range all {
		// A list filtered by service can hold others' only if Keystone ignored the filter.
		if e.ServiceID != want.ServiceID {
			continue
		}
		if sameOwner(e.Owner, want.Owner) || (known[e.ID] && e.Owner == "") {
			owned = append(owned, e)
		}
	}
	// Recorded ones first, then by ID: the choice among duplicates is stable.
	sort.Slice(owned, func(i, j int) bool {
		if known[owned[i].ID] != known[owned[j].ID] {
			return known[owned[i].ID]
		}
		return owned[i].ID < owned[j].ID
	})
	return owned, all, nil
}

// besideError is, for a set that goes Alone, the EndpointBesideError of the first
// interface (sorted) it wants and has no endpoint of among owned, where all holds one in
// its region that is not among owned; nil when none.
func besideError(all, owned []Endpoint, want EndpointSet) error {
	if !want.Alone {
		return nil
	}
	own, has := map[string]bool{}, map[string]bool{}
	for _, e := range owned {
		own[e.ID], has[e.Interface] = true, true
	}
	for _, iface := range sortedKeys(want.URLs) {
		if has[iface] {
			continue
		}
		for _, e := range all {
			if !own[e.ID] && e.Interface == iface && strings.EqualFold(e.region(), want.Region) {
				return &EndpointBesideError{Interface: iface, Region: want.Region, Other: e}
			}
		}
	}
	return nil
}

// EnsureEndpoints makes the owner's endpoints of the service exactly want.URLs in
// want.Region: it keeps one endpoint per interface (updating its URL and region),
// creates missing ones marked with the owner, and deletes the owner's others (an
// interface no longer wanted, a duplicate). Endpoints of anyone else are not touched.
// It returns the endpoint IDs by interface.
func (c *Client) EnsureEndpoints(ctx context.Context, want EndpointSet) (map[string]string, bool, error) {
	owned, all, err := c.ownedEndpoints(ctx, want)
	if err != nil {
		return nil, false, err
	}
	if err := besideError(all, owned, want); err != nil {
		// Checked before any write: an interface refused leaves the others as they were.
		return nil, false, err
	}
	ids := map[string]string{}
	changed := false
	for _, e := range owned {
		url, wanted := want.URLs[e.Interface]
		if !wanted || ids[e.Interface] != "" {
			if err := c.deleteEndpointUnchecked(ctx, e.ID); err != nil {
				return nil, false, err
			}
			changed = true
			continue
		}
		if e.URL != url || e.region() != want.Region {
			if _, err := endpoints.Update(ctx, c.sc, e.ID, endpoints.UpdateOpts{URL: url, Region: want.Region}).Extract(); err != nil {
				return nil, false, fmt.Errorf("updating endpoint %s (%s): %w", e.ID, e.Interface, err)
			}
			changed = true
		}
		ids[e.Interface] = e.ID
	}
	for _, iface := range sortedKeys(want.URLs) {
		if ids[iface] != "" {
			continue
		}
		created, err := endpoints.Create(ctx, c.sc, markedEndpoint{CreateOpts: endpoints.CreateOpts{
			Availability: gophercloud.Availability(iface), Region: want.Region, URL: want.URLs[iface], ServiceID: want.ServiceID,
		}, owner: want.Owner}).Extract()
		if err != nil {
			return nil, false, fmt.Errorf("creating the %s endpoint: %w", iface, err)
		}
		ids[iface] = created.ID
		changed = true
	}
	return ids, changed, nil
}

// DeleteEndpoints deletes the owner's endpoints of the service; those already gone are fine.
func (c *Client) DeleteEndpoints(ctx context.Context, want EndpointSet) error {
	want.URLs = nil
	_, _, err := c.EnsureEndpoints(ctx, want)
	if notFound(err) {
		// The service itself is gone, and its endpoints with it.
		return nil
	}
	return err
}

// markedEndpoint is a create request that also carries the owner mark.
type markedEndpoint struct {
	endpoints.CreateOpts
	owner string
}

func (m markedEndpoint) ToEndpointCreateMap() (map[string]any, error) {
	body, err := m.CreateOpts.ToEndpointCreateMap()
	if err != nil {
		return nil, err
	}
	return withMark(body, "endpoint", m.owner)
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
