package fakekeystone

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Server is an in-memory Keystone (identity v3) for tests: tokens, services, endpoints,
// projects, users, roles and role assignments, with injected faults. Call New.
type Server struct {
	*httptest.Server

	mu     sync.Mutex
	nextID int
	tokens map[string]string // token -> user ID
	// adminID is the admin user's ID: it may read and revoke any user's application credentials.
	adminID  string
	issued   []string // every token issued, in order
	entities map[string]map[string]map[string]any
	// indexed finds entities by the fields lookups filter on (indexedFields): kind, field,
	// value, the IDs of the entities that had it when last stored (store). A lookup
	// checks each one found against the filter, so an ID whose entity changed or went is
	// passed over; every entity with the value is there.
	indexed map[string]map[string]map[string][]string
	// encoded is each entity's JSON as a listing shows it (no password), kept until it
	// changes (store): a listing of every service is one per new registration.
	encoded  map[string]map[string][]byte
	assigned map[string]bool // project/user/role
	requests map[string]int  // "METHOD /v3/kind" -> count
	fault    func(http.ResponseWriter, *http.Request) bool
	delay    time.Duration
	limit    int
	// foldNames compares names without case, as Keystone on MariaDB does (FoldNames).
	foldNames bool
	// revoked records each DELETE of an application credential (Revoked).
	revoked []string
	// federated holds the IDs of the users of an identity provider that are no local
	// users (CreateFederatedUser).
	federated map[string]bool

	// Authentications counts successful POST /v3/auth/tokens.
	Authentications atomic.Int64
	// Connections counts the connections clients opened: a client that keeps its
	// connections for the next request opens about as many as it sends requests at once.
	Connections atomic.Int64
}

// Kinds of entities, as in Keystone's URLs.
const (
	Services  = "services"
	Endpoints = "endpoints"
	Projects  = "projects"
	Users     = "users"
	Roles     = "roles"
	// Regions are named by their ID, as Keystone's are.
	Regions = "regions"
	// AppCreds are application credentials, under /v3/users/{id}/application_credentials.
	AppCreds = "application_credentials"
)

// New starts a fake Keystone on 127.0.0.1 with an admin user, the default domain and
// an admin project.
func New(admin, password string) *Server {
	s := newServer(admin, password)
	s.Server = s.unstarted()
	s.Start()
	return s
}

// NewTLS is New served over HTTPS, with a certificate for 127.0.0.1 that CAPEM trusts.
func NewTLS(admin, password string) *Server {
	s := newServer(admin, password)
	s.Server = s.unstarted()
	s.StartTLS()
	return s
}

// unstarted is s's HTTP server, counting the connections it accepts (Connections).
func (s *Server) unstarted() *httptest.Server {
	return CountingConnections(http.HandlerFunc(s.serve), &s.Connections)
}

// CountingConnections is an unstarted test server of handler that counts in n the
// connections it accepts: a fake Keystone's, or a front of one that changes its answers.
func CountingConnections(handler http.Handler, n *atomic.Int64) *httptest.Server {
	srv := httptest.NewUnstartedServer(handler)
	srv.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			n.Add(1)
		}
	}
	return srv
}

// newServer is a fake Keystone's state, not yet served.
func newServer(admin, password string) *Server {
	s := &Server{tokens: map[string]string{}, assigned: map[string]bool{}, requests: map[string]int{},
		entities: map[string]map[string]map[string]any{}, indexed: map[string]map[string]map[string][]string{},
		encoded: map[string]map[string][]byte{}, federated: map[string]bool{}}
	for _, k := range []string{Services, Endpoints, Projects, Users, Roles, Regions, AppCreds} {
		s.entities[k] = map[string]map[string]any{}
		s.encoded[k] = map[string][]byte{}
		s.indexed[k] = map[string]map[string][]string{}
		for _, f := range indexedFields {
			s.indexed[k][f] = map[string][]string{}
		}
	}
	// keystone-manage bootstrap's region.
	s.store(Regions, map[string]any{"id": "regionOne"})
	s.put(Projects, map[string]any{"name": "admin", "domain_id": "default"})
	s.adminID = s.put(Users, map[string]any{"name": admin, "domain_id": "default", "password": password, "enabled": true})["id"].(string)
	s.put(Roles, map[string]any{"name": "admin"})
	return s
}

// CAPEM is the PEM certificate a client trusts to reach an HTTPS fake (NewTLS).
func (s *Server) CAPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
}

// put stores e, a new entity of kind, under a new ID.
func (s *Server) put(kind string, e map[string]any) map[string]any {
	s.nextID++
	e["id"] = fmt.Sprintf("%s-%04d", kind[:len(kind)-1], s.nextID)
	s.store(kind, e)
	return e
}

// indexedFields are the fields find looks entities up by rather than reading every one:
// a registration's lookups of its user by name and of its service's endpoints, at a
// thousand of each.
var indexedFields = []string{"name", "type", "service_id", "user_id"}

// store keeps e, an entity of kind with its ID, new or just changed: every change of an
// entity's fields is stored again, so that its index entries and its JSON follow. IDs
// are not used twice (but a region's, its name, stored once), so an index lists each once.
func (s *Server) store(kind string, e map[string]any) {
	id := e["id"].(string)
	s.entities[kind][id] = e
	delete(s.encoded[kind], id)
	for _, f := range indexedFields {
		if v, ok := e[f].(string); ok && !slices.Contains(s.indexed[kind][f][v], id) {
			s.indexed[kind][f][v] = append(s.indexed[kind][f][v], id)
		}
	}
}

// CreateFederatedUser adds a user of an identity provider mapped to domainID, as
// Keystone makes one at its first login through the provider (a shadow user): a
// "federated" field that Keystone shows by ID and leaves out of listings; no local
// user, so its name does not make a local user's create conflict, listings put it after
// the local users, and a password login of it fails with 500, as Keystone 22.0.2's does
// (tests/realkeystone TestFederatedUserBesideCreated).
func (s *Server) CreateFederatedUser(name, domainID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.put(Users, map[string]any{"name": name, "domain_id": domainID, "enabled": true, "federated": []any{
		map[string]any{"idp_id": "idp", "protocols": []any{map[string]any{"protocol_id": "mapped", "unique_id": name}}}}})["id"].(string)
	s.federated[id] = true
	return id
}

// CreateRegion adds a region named id, as `openstack region create` does.
func (s *Server) CreateRegion(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.store(Regions, map[string]any{"id": id})
}

// SetPassword sets the password of a user, by name.
func (s *Server) SetPassword(user, password string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range s.entities[Users] {
		if u["name"] == user {
			u["password"] = password
			s.store(Users, u)
		}
	}
}

// Fail makes every request answer code until Heal; 0 closes the connection instead.
func (s *Server) Fail(code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fault = func(w http.ResponseWriter, _ *http.Request) bool {
		if code == 0 {
			if hj, ok := w.(http.Hijacker); ok {
				if conn, _, err := hj.Hijack(); err == nil {
					_ = conn.Close()
					return true
				}
			}
		}
		writeError(w, code, http.StatusText(code))
		return true
	}
}

// FailNext makes the next request to method and path prefix answer code, once.
func (s *Server) FailNext(method, pathPrefix string, code int) {
	s.failMatching(method, pathPrefix, code, true)
}

// FailEvery makes every request to method and path prefix answer code until Heal.
func (s *Server) FailEvery(method, pathPrefix string, code int) {
	s.failMatching(method, pathPrefix, code, false)
}

func (s *Server) failMatching(method, pathPrefix string, code int, once bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fault = func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != method || !strings.HasPrefix(r.URL.Path, pathPrefix) {
			return false
		}
		if once {
			s.fault = nil
		}
		writeError(w, code, http.StatusText(code))
		return true
	}
}

// RaceNext plays another client winning a race: the next POST creating kind first
// creates the entity itself, then answers 409 Conflict.
func (s *Server) RaceNext(kind string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fault = func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodPost || r.URL.Path != "/v3/"+kind {
			return false
		}
		var body map[string]map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			return false
		}
		s.mu.Lock()
		s.fault = nil
		s.put(kind, body[kind[:len(kind)-1]])
		s.mu.Unlock()
		writeError(w, http.StatusConflict, "Conflict occurred attempting to store "+kind[:len(kind)-1])
		return true
	}
}

// HoldNext holds the next request to method and path prefix until release is called:
// reached is closed when it arrives, and it is then served as usual. It plays a slow
// Keystone at one chosen moment, for what others do meanwhile.
func (s *Server) HoldNext(method, pathPrefix string) (reached <-chan struct{}, release func()) {
	arrived, released := make(chan struct{}), make(chan struct{})
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fault = func(_ http.ResponseWriter, r *http.Request) bool {
		if r.Method != method || !strings.HasPrefix(r.URL.Path, pathPrefix) {
			return false
		}
		s.mu.Lock()
		s.fault = nil
		s.mu.Unlock()
		close(arrived)
		<-released
		return false
	}
	var once sync.Once
	return arrived, func() { once.Do(func() { close(released) }) }
}

// Slow delays every answer by d.
func (s *Server) Slow(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// Heal ends faults and delays.
func (s *Server) Heal() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fault, s.delay = nil, 0
}

// ExpireTokens invalidates every token, as a token expiry would.
func (s *Server) ExpireTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens = map[string]string{}
}

// Requests returns the number of requests by "METHOD /v3/<kind>".
func (s *Server) Requests() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for k, v := range s.requests {
		out[k] = v
	}
	return out
}

// RequestsSince returns the requests made since before, a count Requests returned,
// by "METHOD /v3/<kind>"; kinds with none are left out.
func (s *Server) RequestsSince(before map[string]int) map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for k, v := range s.requests {
		if d := v - before[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}

// List returns copies of the entities of a kind whose fields equal match.
func (s *Server) List(kind string, match map[string]any) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.find(kind, match)
}

// Marked tells whether an entity of kind named name carries this suite's owner mark
// (keystone_operator_owner).
func (s *Server) Marked(kind, name string) bool {
	for _, e := range s.List(kind, map[string]any{"name": name}) {
		if e["keystone_operator_owner"] != nil {
			return true
		}
	}
	return false
}

// Create adds an entity, as another client of Keystone would: a copy of fields, so that
// the caller's later changes to its map do not reach it.
func (s *Server) Create(kind string, fields map[string]any) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.put(kind, maps.Clone(fields))["id"].(string)
}

// Delete removes an entity and what Keystone removes with it, as another client of
// Keystone would.
func (s *Server) Delete(kind, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.entities[kind], id)
	s.cascade(kind, id)
}

// Assigned tells whether user has role on project.
func (s *Server) Assigned(projectID, userID, roleID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.assigned[projectID+"/"+userID+"/"+roleID]
}

// FoldNames has names compared without case, in lookups and uniqueness, as Keystone's
// SQL backend on MariaDB's default collation compares them ("ADMIN" finds admin).
func (s *Server) FoldNames() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.foldNames = true
}

// Revoked lists each DELETE of an application credential, as "<user of its path>/<id>", in order.
func (s *Server) Revoked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.revoked)
}

// same tells whether field k of an entity, have, matches want.
func (s *Server) same(k string, have, want any) bool {
	if h, ok := have.(string); ok && s.foldNames && k == "name" {
		w, _ := want.(string)
		return strings.EqualFold(h, w)
	}
	return have == want
}

// find returns copies, without passwords, of the entities of kind whose fields match
// (an empty string matches anything), by ID.
func (s *Server) find(kind string, match map[string]any) []map[string]any {
	var out []map[string]any
	for _, id := range s.findIDs(kind, match) {
		out = append(out, without(s.entities[kind][id], "password"))
	}
	return out
}

// findIDs returns the IDs of the entities of kind whose fields match, sorted.
func (s *Server) findIDs(kind string, match map[string]any) []string {
	var out []string
	for _, id := range s.candidates(kind, match) {
		if e, ok := s.entities[kind][id]; ok && s.matches(e, match) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// candidates are the IDs of the entities of kind that may match: the ones an indexed
// field of match names (an ID; a name but when names are compared without case), else
// every entity of kind. Some may have changed or gone since.
func (s *Server) candidates(kind string, match map[string]any) []string {
	if id, ok := match["id"].(string); ok && id != "" {
		return []string{id}
	}
	for _, f := range indexedFields {
		if v, ok := match[f].(string); ok && v != "" && (f != "name" || !s.foldNames) {
			return s.indexed[kind][f][v]
		}
	}
	all := make([]string, 0, len(s.entities[kind]))
	for id := range s.entities[kind] {
		all = append(all, id)
	}
	return all
}

// matches tells whether entity e's fields match (an empty string matches anything).
func (s *Server) matches(e, match map[string]any) bool {
	for k, v := range match {
		if v != "" && !s.same(k, e[k], v) {
			return false
		}
	}
	return true
}

// encode is the JSON of the entity of kind with ID id as a listing shows it: no password,
// no federated identities.
func (s *Server) encode(kind, id string) []byte {
	if b, ok := s.encoded[kind][id]; ok {
		return b
	}
	b, err := json.Marshal(without(without(s.entities[kind][id], "password"), "federated"))
	if err != nil {
		panic(err) // entities hold what JSON decoded
	}
	s.encoded[kind][id] = b
	return b
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	fault, delay := s.fault, s.delay
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	key := r.Method + " /" + strings.Join(parts[:min(len(parts), 2)], "/")
	s.requests[key]++
	// FAKE_KEYSTONE_DEBUG=1 prints every request, to see what a spec asked of Keystone.
	if os.Getenv("FAKE_KEYSTONE_DEBUG") != "" {
		fmt.Fprintln(os.Stderr, "FAKEKS", r.Method, r.URL.String())
	}
	s.mu.Unlock()
	time.Sleep(delay)
	if fault != nil && fault(w, r) {
		return
	}
	if len(parts) < 2 || parts[0] != "v3" {
		writeError(w, http.StatusNotFound, "not found")
		return
	}
	if parts[1] == "auth" {
		s.issueToken(w, r)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.tokens[r.Header.Get("X-Auth-Token")]; !ok {
		writeError(w, http.StatusUnauthorized, "The request you have made requires authentication.")
		return
	}
	s.route(w, r, parts)
}

// route serves an authenticated request under /v3 (parts: the path's segments).
func (s *Server) route(w http.ResponseWriter, r *http.Request, parts []string) {
	switch {
	case parts[1] == "role_assignments":
		s.listAssignments(w, r)
	case len(parts) >= 4 && parts[1] == Users && parts[3] == AppCreds:
		s.appCreds(w, r, parts[2], parts[4:])
	case len(parts) == 7 && parts[1] == Projects && parts[3] == Users && parts[5] == Roles:
		s.assignment(w, r, parts[2]+"/"+parts[4]+"/"+parts[6])
	case s.entities[parts[1]] == nil:
		writeError(w, http.StatusNotFound, "unknown resource "+parts[1])
	case len(parts) == 2:
		s.collection(w, r, parts[1])
	default:
		s.member(w, r, parts[1], parts[2])
	}
}

// ListLimit cuts every list to its first n entries, saying "truncated": true, as
// Keystone's list_limit does; 0 lists everything.
func (s *Server) ListLimit(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limit = n
}

// unique lists the fields that must be unique per kind (Keystone answers 409).
var unique = map[string][]string{Projects: {"name", "domain_id"}, Users: {"name", "domain_id"}, Roles: {"name"}}

// list answers a GET of a collection: the entities matching the query's filters.
func (s *Server) list(w http.ResponseWriter, r *http.Request, kind string) {
	q := r.URL.Query()
	match := map[string]any{}
	for _, f := range []string{"name", "type", "domain_id", "service_id", "interface", "region_id"} {
		if v := q.Get(f); v != "" {
			field := f
			if f == "region_id" {
				field = "region"
			}
			match[field] = v
		}
	}
	ids := s.findIDs(kind, match)
	if kind == Users {
		// Local users first (CreateFederatedUser).
		slices.SortStableFunc(ids, func(a, b string) int { return compareBool(s.federated[a], s.federated[b]) })
	}
	truncated := false
	if limit := s.limit; limit > 0 && len(ids) > limit {
		// As Keystone's [DEFAULT] list_limit cuts a list: the first entries, and a flag.
		ids, truncated = ids[:limit], true
	}
	// Written from each entity's JSON as kept (encode): Keystone answers an empty list,
	// never null.
	body := []byte(`{"` + kind + `":[`)
	for i, id := range ids {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, s.encode(kind, id)...)
	}
	body = append(body, `],"links":{"next":null}`...)
	if truncated {
		body = append(body, `,"truncated":true`...)
	}
	body = append(body, "}\n"...)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body) //nolint:gosec // JSON of the fake's own entities, as application/json
}

func (s *Server) collection(w http.ResponseWriter, r *http.Request, kind string) {
	singular := kind[:len(kind)-1]
	switch r.Method {
	case http.MethodGet:
		s.list(w, r, kind)
	case http.MethodPost:
		var body map[string]map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body[singular] == nil {
			writeError(w, http.StatusBadRequest, "malformed request")
			return
		}
		e := body[singular]
		if fields := unique[kind]; fields != nil {
			match := map[string]any{}
			for _, f := range fields {
				match[f] = e[f]
			}
			if slices.ContainsFunc(s.findIDs(kind, match), func(id string) bool { return !s.federated[id] }) {
				writeError(w, http.StatusConflict, fmt.Sprintf("Duplicate entry found with name %v", e["name"]))
				return
			}
		}
		if kind == Endpoints && e["region"] != nil {
			e["region_id"] = e["region"]
		}
		created := s.put(kind, e)
		writeJSON(w, http.StatusCreated, map[string]any{singular: s.find(kind, map[string]any{"id": created["id"]})[0]})
	default:
		writeError(w, http.StatusMethodNotAllowed, "method not allowed")
	}
}

func (s *Server) member(w http.ResponseWriter, r *http.Request, kind, id string) {
	singular := kind[:len(kind)-1]
	e, ok := s.entities[kind][id]
	if !ok {
		writeError(w, http.StatusNotFound, "Could not find "+singular+": "+id+".")
		return
	}
	switch r.Method {
	case http.MethodGet:
		writeJSON(w, http.StatusOK, map[string]any{singular: s.find(kind, map[string]any{"id": id})[0]})
	case http.MethodPatch:
		var body map[string]map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body[singular] == nil {
			writeError(w, http.StatusBadRequest, "malformed request")
			return
		}
		for k, v := range body[singular] {
			e[k] = v
		}
		if kind == Endpoints && body[singular]["region"] != nil {
			e["region_id"] = e["region"]
		}
		s.store(kind, e)
		writeJSON(w, http.StatusOK, map[string]any{singular: s.find(kind, map[string]any{"id": id})[0]})
	case http.MethodDelete:
		delete(s.entities[kind], id)
		s.cascade(kind, id)
		w.WriteHeader(http.StatusNoContent)
	default:
		writeError(w, http.StatusMethodNotAllowed, "method not allowed")
	}
}

// assignment grants (PUT) or revokes (DELETE) the role assignment "project/user/role".
func (s *Server) assignment(w http.ResponseWriter, r *http.Request, key string) {
	parts := strings.Split(key, "/")
	switch {
	case r.Method == http.MethodPut && (s.entities[Projects][parts[0]] == nil || s.entities[Users][parts[1]] == nil ||
		s.entities[Roles][parts[2]] == nil):
		// Keystone answers 404 for a project, user or role it does not know.
		writeError(w, http.StatusNotFound, "Could not find the project, user or role of "+key)
		return
	case r.Method == http.MethodPut:
		s.assigned[key] = true
	case r.Method == http.MethodDelete && s.assigned[key]:
		delete(s.assigned, key)
	case r.Method == http.MethodDelete:
		writeError(w, http.StatusNotFound, "Could not find role assignment")
		return
	default:
		writeError(w, http.StatusMethodNotAllowed, "method not allowed")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// cascade deletes what Keystone deletes with an entity: a service's endpoints, the
// role assignments of a project, user or role.
func (s *Server) cascade(kind, id string) {
	switch kind {
	case Services:
		for eid, e := range s.entities[Endpoints] {
			if e["service_id"] == id {
				delete(s.entities[Endpoints], eid)
			}
		}
	case Projects, Users, Roles:
		if kind == Users {
			// Keystone revokes a deleted user's tokens (the next request gets a 401) and
			// deletes its application credentials.
			for token, user := range s.tokens {
				if user == id {
					delete(s.tokens, token)
				}
			}
			for acID, ac := range s.entities[AppCreds] {
				if ac["user_id"] == id {
					delete(s.entities[AppCreds], acID)
				}
			}
		}
		field := map[string]int{Projects: 0, Users: 1, Roles: 2}[kind]
		for key := range s.assigned {
			if strings.Split(key, "/")[field] == id {
				delete(s.assigned, key)
			}
		}
	}
}

func (s *Server) listAssignments(w http.ResponseWriter, r *http.Request) {
	user, project := r.URL.Query().Get("user.id"), r.URL.Query().Get("scope.project.id")
	var out []map[string]any
	for key := range s.assigned {
		p := strings.Split(key, "/")
		if (project == "" || p[0] == project) && (user == "" || p[1] == user) {
			out = append(out, map[string]any{"role": map[string]any{"id": p[2]}, "user": map[string]any{"id": p[1]},
				"scope": map[string]any{"project": map[string]any{"id": p[0]}}})
		}
	}
	if out == nil {
		out = []map[string]any{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"role_assignments": out, "links": map[string]any{"next": nil}})
}

type authRequest struct {
	Auth struct {
		Identity struct {
			Methods  []string `json:"methods"`
			Password struct {
				User struct {
					ID       string `json:"id"`
					Name     string `json:"name"`
					Password string `json:"password"`
				} `json:"user"`
			} `json:"password"`
			AppCred struct {
				ID     string `json:"id"`
				Secret string `json:"secret"`
			} `json:"application_credential"`
		} `json:"identity"`
	} `json:"auth"`
}

func (s *Server) issueToken(w http.ResponseWriter, r *http.Request) {
	var req authRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "malformed request")
		return
	}
	s.mu.Lock()
	if s.federated[req.Auth.Identity.Password.User.ID] {
		s.mu.Unlock()
		writeError(w, http.StatusInternalServerError, "An unexpected error prevented the server from fulfilling your request.")
		return
	}
	user := s.authenticate(req)
	var token string
	if user != nil {
		token = newToken()
		s.tokens[token] = user["id"].(string)
		s.issued = append(s.issued, token)
	}
	s.mu.Unlock()
	if user == nil {
		writeError(w, http.StatusUnauthorized, "The request you have made requires authentication.")
		return
	}
	s.Authentications.Add(1)
	w.Header().Set("X-Subject-Token", token)
	writeJSON(w, http.StatusCreated, map[string]any{"token": map[string]any{
		"expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
		"user":       map[string]any{"name": user["name"], "id": user["id"]},
		"catalog":    []any{},
	}})
}

// newToken returns a token as unguessable, and as easy to search for, as Keystone's.
func newToken() string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return "gAAAA" + hex.EncodeToString(b)
}

// Tokens returns every token the server issued, expired ones included.
func (s *Server) Tokens() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.issued)
}

// authenticate returns the user a request authenticates, nil when none.
func (s *Server) authenticate(req authRequest) map[string]any {
	id := req.Auth.Identity
	if slices.Contains(id.Methods, "application_credential") {
		ac := s.entities[AppCreds][id.AppCred.ID]
		if ac == nil || ac["secret"] != id.AppCred.Secret {
			return nil
		}
		if exp, ok := ac["expires_at"].(string); ok && exp != "" {
			if t, err := time.Parse(appCredTime, exp); err == nil && time.Now().After(t) {
				return nil
			}
		}
		return s.entities[Users][ac["user_id"].(string)]
	}
	for _, u := range s.entities[Users] {
		named := s.same("name", u["name"], id.Password.User.Name)
		if id.Password.User.ID != "" {
			named = u["id"] == id.Password.User.ID
		}
		if named && u["password"] == id.Password.User.Password {
			return u
		}
	}
	return nil
}

// appCredTime is how Keystone writes expires_at.
const appCredTime = "2006-01-02T15:04:05.000000"

// accessRuleMethod is Keystone's pattern for an access rule's method.
var accessRuleMethod = regexp.MustCompile(`^(POST|GET|HEAD|PATCH|PUT|DELETE)$`)

// appCreds serves /v3/users/{userID}/application_credentials[/{id}] with the answers
// Debian's Keystone gives (measured): 403 when the token's user is another (but the
// admin reading or revoking), 404 for an unknown role, 400 for a role the user
// does not have, a bad access rule or an expiry in the past, 409 for a duplicate name.
// One credential is found by its ID alone, whatever user the path names, and the policy
// is checked against its own user (keystone/api/users.py, _update_request_user_id_attribute).
func (s *Server) appCreds(w http.ResponseWriter, r *http.Request, userID string, rest []string) {
	caller := s.tokens[r.Header.Get("X-Auth-Token")]
	if len(rest) == 1 {
		s.oneAppCred(w, r, caller, userID, rest[0])
		return
	}
	// Keystone's policy: a user's own credentials; the admin may also list others', never
	// create them.
	if caller != userID && (r.Method == http.MethodPost || !s.isAdmin(caller)) {
		writeError(w, http.StatusForbidden, "You are not authorized to perform the requested action: identity:application_credential.")
		return
	}
	if s.entities[Users][userID] == nil {
		writeError(w, http.StatusNotFound, "Could not find user: "+userID+".")
		return
	}
	switch r.Method {
	case http.MethodGet:
		list := []map[string]any{}
		for _, ac := range s.find(AppCreds, map[string]any{"user_id": userID}) {
			list = append(list, without(ac, "secret"))
		}
		writeJSON(w, http.StatusOK, map[string]any{"application_credentials": list, "links": map[string]any{"next": nil}})
	case http.MethodPost:
		var body struct {
			AC map[string]any `json:"application_credential"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.AC == nil {
			writeError(w, http.StatusBadRequest, "malformed request")
			return
		}
		if code, msg := s.validAppCred(userID, body.AC); code != 0 {
			writeError(w, code, msg)
			return
		}
		body.AC["user_id"] = userID
		s.nextID++
		body.AC["secret"] = fmt.Sprintf("secret-%d", s.nextID)
		created := s.put(AppCreds, body.AC)
		writeJSON(w, http.StatusCreated, map[string]any{"application_credential": created})
	default:
		writeError(w, http.StatusMethodNotAllowed, "method not allowed")
	}
}

// oneAppCred serves /v3/users/{pathUser}/application_credentials/{id} for caller: the
// credential found by its ID alone, the policy checked against its own user.
func (s *Server) oneAppCred(w http.ResponseWriter, r *http.Request, caller, pathUser, id string) {
	userID := pathUser
	if ac := s.entities[AppCreds][id]; ac != nil {
		userID = ac["user_id"].(string)
	}
	if caller != userID && !s.isAdmin(caller) {
		writeError(w, http.StatusForbidden, "You are not authorized to perform the requested action: identity:application_credential.")
		return
	}
	if r.Method == http.MethodDelete {
		s.revoked = append(s.revoked, pathUser+"/"+id)
	}
	s.appCred(w, r, id)
}

// appCred serves /v3/users/{userID}/application_credentials/{id}, the caller allowed.
func (s *Server) appCred(w http.ResponseWriter, r *http.Request, id string) {
	ac := s.entities[AppCreds][id]
	if ac == nil {
		writeError(w, http.StatusNotFound, "Could not find Application Credential: "+id+".")
		return
	}
	switch r.Method {
	case http.MethodGet:
		writeJSON(w, http.StatusOK, map[string]any{"application_credential": without(ac, "secret")})
	case http.MethodDelete:
		delete(s.entities[AppCreds], id)
		w.WriteHeader(http.StatusNoContent)
	default:
		writeError(w, http.StatusMethodNotAllowed, "method not allowed")
	}
}

// isAdmin tells whether Keystone's admin_required rule holds for the user: the admin, or
// a user with the admin role (service users have it, by default).
func (s *Server) isAdmin(userID string) bool {
	if userID == s.adminID {
		return true
	}
	for _, role := range s.find(Roles, map[string]any{"name": "admin"}) {
		for key := range s.assigned {
			if p := strings.Split(key, "/"); p[1] == userID && p[2] == role["id"] {
				return true
			}
		}
	}
	return false
}

func (s *Server) validAppCred(userID string, ac map[string]any) (int, string) {
	if len(s.find(AppCreds, map[string]any{"user_id": userID, "name": ac["name"]})) > 0 {
		return http.StatusConflict, fmt.Sprintf("Conflict occurred attempting to store application_credential - Duplicate entry found with name %v.", ac["name"])
	}
	roles, _ := ac["roles"].([]any)
	for _, raw := range roles {
		name, _ := raw.(map[string]any)["name"].(string)
		found := s.find(Roles, map[string]any{"name": name})
		if len(found) == 0 {
			return http.StatusNotFound, "Role " + name + " is not defined"
		}
		assigned := false
		for key := range s.assigned {
			if p := strings.Split(key, "/"); p[1] == userID && p[2] == found[0]["id"] {
				assigned = true
			}
		}
		if !assigned {
			return http.StatusBadRequest, "Invalid application credential: Cannot create an application credential with unassigned role"
		}
	}
	rules, _ := ac["access_rules"].([]any)
	for i, raw := range rules {
		method, _ := raw.(map[string]any)["method"].(string)
		if !accessRuleMethod.MatchString(method) {
			return http.StatusBadRequest, fmt.Sprintf("Invalid input for field 'access_rules/%d/method': '%s' does not match '^(POST|GET|HEAD|PATCH|PUT|DELETE)$'", i, method)
		}
	}
	if exp, ok := ac["expires_at"].(string); ok && exp != "" {
		t, err := time.Parse("2006-01-02T15:04:05.999999", exp)
		if err != nil || t.Before(time.Now()) {
			return http.StatusBadRequest, "The 'expires_at' must not be before now."
		}
		ac["expires_at"] = t.Format(appCredTime)
	}
	return 0, ""
}

// compareBool orders false before true.
func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// without is a copy of entity e without its field key: what Keystone never shows of it
// (a user's password, an application credential's secret once created).
func without(e map[string]any, key string) map[string]any {
	out := make(map[string]any, len(e))
	for k, v := range e {
		if k != key {
			out[k] = v
		}
	}
	return out
}

// AppCredIDs returns the IDs of the application credentials of a user, by name.
func (s *Server) AppCredIDs(user string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for _, u := range s.find(Users, map[string]any{"name": user}) {
		for _, ac := range s.find(AppCreds, map[string]any{"user_id": u["id"]}) {
			ids = append(ids, ac["id"].(string))
		}
	}
	return ids
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]any{"error": map[string]any{"code": code, "message": msg}})
}
