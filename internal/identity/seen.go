package identity

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// Seen collects what one round read of Keystone's services and users, in the form of
// Records, so that the regions' watch can take it as the baseline of a KeystoneService it
// has not looked at yet instead of running that round again: what another cluster
// changed since shows as a difference. It keeps, of each entity, what the round listed
// (and, of what it created, what it sent); a write that changes an entity listed
// otherwise (an update, a mark, a deletion), or an entity listed twice with different
// records, spoils it: the round decided from something its records no longer show. What
// it lacks (an entity the round did not list) only makes the baseline differ from the
// watch's look, which then runs the round again, as without a baseline.
type Seen struct {
	// group and user are what it keeps: the services of the type group
	// (ServiceTypeGroup), the users of the name (UserRecord's key).
	group, user string

	mu       sync.Mutex
	services map[string]Service
	users    map[string]User
	// listedServices and listedUsers tell whether a listing of each kind was seen: an
	// entity a later one brings that the earlier did not, one the round did not decide
	// from, spoils it (created ones are recorded by their create).
	listedServices, listedUsers bool
	// wholeCatalog tells whether it saw a listing of every service, so every service
	// of the type group (a listing by type has the type's alone).
	wholeCatalog bool
	spoiled      bool
}

// NewSeen returns an empty Seen for the records of a KeystoneService of serviceType and
// serviceUser: those of the services of serviceType's group (TypeRecord), among them the
// service's, and of the user (UserRecord).
func NewSeen(serviceType, serviceUser string) *Seen {
	return &Seen{group: ServiceTypeGroup(serviceType), user: UserRecord(serviceUser),
		services: map[string]Service{}, users: map[string]User{}}
}

type seenKey struct{}

// Observing returns ctx with the requests made under it collected into s.
func Observing(ctx context.Context, s *Seen) context.Context {
	return context.WithValue(ctx, seenKey{}, s)
}

func seenFrom(ctx context.Context) *Seen {
	s, _ := ctx.Value(seenKey{}).(*Seen)
	return s
}

// Records are the records (Records' keys and values) of what was seen of the services
// of the type group and the user; false when it is spoiled.
func (s *Seen) Records() (map[string]string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.spoiled {
		return nil, false
	}
	services := make([]Service, 0, len(s.services))
	for _, svc := range s.services {
		services = append(services, svc)
	}
	users := make([]User, 0, len(s.users))
	for _, u := range s.users {
		users = append(users, u)
	}
	return recordsOf(services, users), true
}

// WholeGroup tells whether what it saw holds every service of the type group: it
// saw a listing of every service. A round that knows its service lists its type alone.
func (s *Seen) WholeGroup() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.wholeCatalog
}

// sawServices and sawUsers add what a listing (listed) or a create (not listed) showed.
func (s *Seen) sawServices(list []Service, listed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.spoiled = keep(s.services, list, s.group, func(svc Service) (string, string) { return svc.ID, ServiceTypeGroup(svc.Type) },
		func(svc Service) string { return svc.Type + " " + svc.Name + " " + serviceRecord(svc) },
		listed && s.listedServices, false) || s.spoiled
	s.listedServices = s.listedServices || listed
}

func (s *Seen) sawUsers(list []User, listed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.spoiled = keep(s.users, list, s.user, func(u User) (string, string) { return u.ID, UserRecord(u.Name) },
		func(u User) string { return u.Name + " " + userRecord(u) }, listed && s.listedUsers, true) || s.spoiled
	s.listedUsers = s.listedUsers || listed
}

// keep adds to kept (by ID) the entities of list whose key (of: its ID and key) is want,
// and tells whether one spoils what was seen: its record changed since kept, or it is
// new since an earlier listing (newSpoils), or a second one where one is expected
// (single: a user of a name). Only the kept ones' records are made: a listing of every
// service holds a thousand others at scale.
func keep[E any](kept map[string]E, list []E, want string, of func(E) (id, key string), record func(E) string,
	newSpoils, single bool) bool {
	spoiled := false
	for _, e := range list {
		id, key := of(e)
		if key != want {
			continue
		}
		before, known := kept[id]
		if known {
			spoiled = spoiled || record(before) != record(e)
		} else {
			spoiled = spoiled || newSpoils || single && len(kept) > 0
		}
		kept[id] = e
	}
	return spoiled
}

func (s *Seen) spoil() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.spoiled = true
}

// sawListing records in the Seen of ctx, if any, a listing of kind filtered by query
// read into into: services, and users of the default domain (those Records reads).
func sawListing(ctx context.Context, kind string, query url.Values, into any) {
	s := seenFrom(ctx)
	if s == nil {
		return
	}
	switch list := into.(type) {
	case *[]Service:
		if kind == "services" {
			s.sawServices(*list, true)
			if query.Encode() == "" {
				s.mu.Lock()
				s.wholeCatalog = true
				s.mu.Unlock()
			}
		}
	case *[]User:
		if kind == "users" && query.Get("domain_id") == defaultDomain {
			s.sawUsers(*list, true)
		}
	}
}

// defaultDomain is the domain whose users Records reads.
const defaultDomain = "default"

// spoilOn spoils the Seen of req's context, if any, when req is a write that can change
// a service's or a user's record: any write but creating a service or a user (the create
// functions record what they sent), a token, a project or a role, and granting or
// revoking a role. A path it cannot read (no "/v3/") spoils too.
func spoilOn(req *http.Request) {
	if s := seenFrom(req.Context()); s != nil && changesRecords(req.Method, req.URL.Path) {
		s.spoil()
	}
}

// changesRecords tells whether a request of method to path may change what Records
// shows of a service or user, besides the creates that Seen records itself.
func changesRecords(method, path string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	i := strings.LastIndex(path, "/v3/")
	if i < 0 {
		return true
	}
	parts := strings.Split(strings.Trim(path[i+len("/v3/"):], "/"), "/")
	switch method {
	case http.MethodPost:
		// A create: services and users by the functions that record them; projects and
		// roles are not in the records, nor are tokens.
		kept := len(parts) == 1 && createsKept[parts[0]]
		token := len(parts) == 2 && parts[0] == "auth" && parts[1] == "tokens"
		return !kept && !token
	case http.MethodPut, http.MethodDelete:
		return !roleAssignment(parts)
	}
	return true
}

// createsKept are the collections whose creates leave the records as Seen keeps them.
var createsKept = map[string]bool{"services": true, "users": true, "projects": true, "roles": true}

// roleAssignment tells whether parts (a path after /v3/) name a role granted to a user
// or group on a project or domain: assignments are not in the records.
func roleAssignment(parts []string) bool {
	return len(parts) == 6 && (parts[0] == "projects" || parts[0] == "domains") &&
		(parts[2] == "users" || parts[2] == "groups") && parts[4] == "roles"
}
