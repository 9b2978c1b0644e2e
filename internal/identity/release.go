package identity

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/gophercloud/gophercloud/v2"
)

// Release is what releasing a cluster does to one entity (ReleaseCluster).
type Release struct {
	// Entity is "<kind> <name or URL> (<ID>)".
	Entity string
	// Action says what is done: "leaves the owners", "handed to <owner>", "deleted".
	Action string
}

// ReleaseCluster takes cluster, a cluster gone for good, out of every service, user and
// endpoint of Keystone it registered: it leaves the owners of record where other regions
// own the entity too (a keeper hands it to the next owner), and its own alone (its
// endpoints, a service or user no other region owns) are deleted, as its deletion would
// have. With apply false it only says what it would do. It never touches what carries
// no mark of cluster.
func (c *Client) ReleaseCluster(ctx context.Context, cluster string, apply bool) ([]Release, error) {
	if cluster == "" {
		return nil, fmt.Errorf("releasing a cluster needs its identity")
	}
	all, err := c.listAll(ctx)
	if err != nil {
		return nil, err
	}
	r := releaser{c: c, cluster: cluster, apply: apply}
	for _, e := range all.endpoints {
		if err := r.endpoint(ctx, e); err != nil {
			return r.out, err
		}
	}
	for _, s := range all.services {
		if err := r.entity(ctx, "services", s.Type+"/"+s.Name, s.ID, func() error { return c.deleteServiceUnchecked(ctx, s.ID) }); err != nil {
			return r.out, err
		}
	}
	for _, u := range all.users {
		if err := r.entity(ctx, "users", u.Name, u.ID, func() error { return c.deleteUserUnchecked(ctx, u.ID) }); err != nil {
			return r.out, err
		}
	}
	return r.out, nil
}

// releaser is one ReleaseCluster: what it has done, or would do.
type releaser struct {
	c       *Client
	cluster string
	apply   bool
	out     []Release
}

// ofCluster tells whether mark names an object of the cluster released.
func (r *releaser) ofCluster(mark string) bool {
	_, cl := splitMark(mark)
	return cl == r.cluster
}

// endpoint deletes e when the cluster registered it.
func (r *releaser) endpoint(ctx context.Context, e Endpoint) error {
	if !r.ofCluster(e.Owner) {
		return nil
	}
	r.out = append(r.out, Release{Entity: fmt.Sprintf("endpoint %s %s in %s (%s)", e.Interface, e.URL, e.region(), e.ID), Action: "deleted"})
	if !r.apply {
		return nil
	}
	return r.c.deleteEndpointUnchecked(ctx, e.ID)
}

// entity takes the cluster's marks out of the entity id of kind (depart): left to the
// other owners, or, the cluster's alone, removed.
func (r *releaser) entity(ctx context.Context, kind, label, id string, remove func() error) error {
	action, err := r.c.depart(ctx, kind, id, departure{leaving: r.ofCluster, remove: remove, apply: r.apply})
	if action != "" {
		r.out = append(r.out, Release{Entity: fmt.Sprintf("%s %s (%s)", singular(kind), label, id), Action: action})
	}
	return err
}

// everything is every service, user of the default domain and endpoint of Keystone.
type everything struct {
	services  []Service
	users     []User
	endpoints []Endpoint
}

// listAll lists everything ReleaseCluster looks at.
func (c *Client) listAll(ctx context.Context) (everything, error) {
	var all everything
	err := c.list(ctx, &all, "services", "users", "endpoints")
	return all, err
}

// list fills all with the kinds ("services", "users" of the default domain,
// "endpoints") listed in full (listed).
func (c *Client) list(ctx context.Context, all *everything, kinds ...string) error {
	for _, kind := range kinds {
		query, into := url.Values{}, any(nil)
		switch kind {
		case "services":
			into = &all.services
		case "users":
			query, into = url.Values{"domain_id": {"default"}}, &all.users
		case "endpoints":
			into = &all.endpoints
		}
		if err := c.listed(ctx, kind, query, into); err != nil {
			return err
		}
	}
	return nil
}

// listed reads Keystone's listing of kind ("users", "services", "endpoints", "roles") filtered by
// query into into, a pointer to a slice. Keystone's list_limit cuts a list short and says
// so ("truncated", which gophercloud's pages drop): acting on part of it would leave the
// rest behind, unsaid, or take an entity for gone, so a truncated list is an error.
func (c *Client) listed(ctx context.Context, kind string, query url.Values, into any) error {
	path, what := c.sc.ServiceURL(kind), kind
	if filter := query.Encode(); filter != "" {
		path, what = path+"?"+filter, kind+" ("+filter+")"
	}
	// The body is read here, in one pass: a listing can hold every service or user of
	// Keystone, and decoding it first into raw parts, then each part, reads it twice.
	resp, err := c.sc.Get(ctx, path, nil, &gophercloud.RequestOpts{KeepResponseBody: true})
	if resp != nil && resp.Body != nil {
		defer func() { _ = resp.Body.Close() }()
	}
	if err != nil {
		return fmt.Errorf("listing %s: %w", what, err)
	}
	truncated, err := decodeListing(resp.Body, kind, into)
	switch {
	case err != nil:
		return fmt.Errorf("reading %s: %w", what, err)
	case truncated:
		return fmt.Errorf("listing %s: Keystone truncated the list (its list_limit); raise it", what)
	}
	sawListing(ctx, kind, query, into)
	return nil
}

// decodeListing reads the JSON object of a Keystone listing from body: its member kind
// into into, and whether it says "truncated": true. Other members (links) are skipped.
// A listing without kind, or with kind twice, is an error; on an error, into may hold
// part of the list, and is not to be used. It reads with encoding/json/v2's engine (the
// go-json-experiment module, the standard library's from Go 1.27), in one pass: a
// listing of every service, read by each new service's round, is most of what that
// round costs the operator, and encoding/json reads each value twice (once to find its
// end, once to decode it). As encoding/json did, duplicate names and invalid UTF-8 are
// let through: the last of a name wins (a last null too, where encoding/json kept the
// value before it), bad bytes become U+FFFD. Unlike it, a member fills a field of its
// exact name only (its tag's), so an extra attribute of an entity named as another case
// of a field ("Type", "ID") is ignored, never read as the field.
func decodeListing(body io.Reader, kind string, into any) (truncated bool, err error) {
	dec := jsontext.NewDecoder(body, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	switch tok, err := dec.ReadToken(); {
	case err != nil:
		return false, fmt.Errorf("not a JSON object: %w", err)
	case tok.Kind() != '{':
		return false, fmt.Errorf("not a JSON object: it starts with %v", tok)
	}
	found := false
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return false, err
		}
		switch tok.String() {
		case kind:
			if found {
				return false, fmt.Errorf("%q twice in Keystone's answer", kind)
			}
			found = true
			err = jsonv2.UnmarshalDecode(dec, into)
		case "truncated":
			var v jsontext.Value
			v, err = dec.ReadValue()
			truncated = string(v) == "true"
		default:
			err = dec.SkipValue()
		}
		if err != nil {
			return false, err
		}
	}
	if _, err := dec.ReadToken(); err != nil { // the closing brace
		return false, err
	}
	if !found {
		return false, fmt.Errorf("no %q in Keystone's answer", kind)
	}
	return truncated, nil
}

// TypeRecord is the key of Records for the services of serviceType's group
// (ServiceTypeGroup).
func TypeRecord(serviceType string) string { return "type/" + ServiceTypeGroup(serviceType) }

// UserRecord is the key of Records for the user name of the default domain, without
// case, as Keystone finds a user (its database compares names without case).
func UserRecord(name string) string { return "user/" + strings.ToLower(name) }

// Records are the co-owners' records of Keystone's services (by type and name,
// "service/<type>/<name>": several of one type and name in ID order) and of its users
// of the default domain (UserRecord): each entity's keeper, owners of record and, of a
// service, its definition (description, enabled), of a user, its password's source, as
// one comparable string; and which services each type's group has (TypeRecord: their
// IDs, types, names and keepers), which a KeystoneService refused a second service of a
// type waits on. Two listings: what an operator compares between two looks to see what
// another cluster changed (Keystone has no watch).
func (c *Client) Records(ctx context.Context) (map[string]string, error) {
	var all everything
	if err := c.list(ctx, &all, "services", "users"); err != nil {
		return nil, err
	}
	return recordsOf(all.services, all.users), nil
}

// recordsOf are the Records of services and users (of the default domain); it sorts
// them by ID.
func recordsOf(services []Service, users []User) map[string]string {
	slices.SortFunc(services, func(a, b Service) int { return strings.Compare(a.ID, b.ID) })
	slices.SortFunc(users, func(a, b User) int { return strings.Compare(a.ID, b.ID) })
	out := make(map[string]string, len(services)+len(users))
	for _, s := range services {
		out["service/"+s.Type+"/"+s.Name] += serviceRecord(s) + "\n"
		out[TypeRecord(s.Type)] += s.ID + " " + s.Type + " " + s.Name + " " + s.Owner + "\n"
	}
	for _, u := range users {
		out[UserRecord(u.Name)] = userRecord(u)
	}
	return out
}

// serviceRecord is a service's keeper, owners of record and definition as one string.
func serviceRecord(s Service) string {
	return record(s.Owner, s.Owners, fmt.Sprintf("%s %q %t", s.ID, s.Description, s.Enabled))
}

// userRecord is a user's keeper, owners of record and password source as one string.
func userRecord(u User) string { return record(u.Owner, u.Owners, u.PasswordFrom) }

// record is an entity's keeper, owners of record and what else tells a change (a
// service's definition, a user's password source) as one string.
func record(keeper string, owners Owners, more string) string {
	// encoding/json's: a map's keys sorted, so the same record is the same string (v2's
	// Marshal writes a map in Go's random order unless told otherwise); never an error.
	recorded, _ := json.Marshal(owners)
	return keeper + " " + string(recorded) + " " + more
}
