package fakekeystone

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"testing"
)

// call sends method path with body (nil for none) as the admin, and returns the answer's
// status and decoded JSON body (nil for none).
func call(t *testing.T, s *Server, token, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var in io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		in = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.URL+path, in)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Auth-Token", token)
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s %s answered %q: %v", method, path, raw, err)
		}
	}
	return resp.StatusCode, out
}

func login(t *testing.T, s *Server) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL+"/v3/auth/tokens", bytes.NewReader([]byte(
		`{"auth":{"identity":{"methods":["password"],"password":{"user":{"name":"admin","password":"pw"}}}}}`)))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("login answered %d", resp.StatusCode)
	}
	return resp.Header.Get("X-Subject-Token")
}

// names lists the names of kind's entities a GET of path answers.
func names(t *testing.T, s *Server, token, kind, path string) []string {
	t.Helper()
	code, body := call(t, s, token, http.MethodGet, path, nil)
	if code != http.StatusOK {
		t.Fatalf("GET %s answered %d", path, code)
	}
	list, ok := body[kind].([]any)
	if !ok {
		t.Fatalf("GET %s: no list of %s in %v", path, kind, body)
	}
	out := []string{}
	for _, e := range list {
		entity := e.(map[string]any)
		if _, ok := entity["password"]; ok {
			t.Errorf("GET %s shows a password: %v", path, entity)
		}
		out = append(out, entity["name"].(string))
	}
	return out
}

// expectNames checks that a GET of path lists kind's entities named want, in this order.
func expectNames(t *testing.T, s *Server, token, kind, path, what string, want ...string) {
	t.Helper()
	if got := names(t, s, token, kind, path); !slices.Equal(got, append([]string{}, want...)) {
		t.Errorf("%s: GET %s lists %v, want %v", what, path, got, want)
	}
}

// TestLookupsFollowChanges: the lookups that read an index (by name, type, service) find
// what a rename, a deletion, a cascade and a new entity left, as a reading of every
// entity would, and listings show each entity as it is now.
func TestLookupsFollowChanges(t *testing.T) {
	s := New("admin", "pw")
	defer s.Close()
	token := login(t, s)
	post := func(kind string, fields map[string]any) string {
		t.Helper()
		code, body := call(t, s, token, http.MethodPost, "/v3/"+kind, map[string]any{kind[:len(kind)-1]: fields})
		if code != http.StatusCreated {
			t.Fatalf("POST %s answered %d", kind, code)
		}
		return body[kind[:len(kind)-1]].(map[string]any)["id"].(string)
	}
	glance := post(Services, map[string]any{"name": "glance", "type": "image"})
	post(Services, map[string]any{"name": "nova", "type": "compute"})
	post(Endpoints, map[string]any{"service_id": glance, "interface": "public", "name": "glance-public"})
	post(Users, map[string]any{"name": "glance", "domain_id": "default", "password": "secret"})

	expectNames(t, s, token, Services, "/v3/services?type=image", "services of type image", "glance")
	expectNames(t, s, token, Users, "/v3/users?name=glance&domain_id=default", "users named glance", "glance")

	if code, _ := call(t, s, token, http.MethodPatch, "/v3/services/"+glance,
		map[string]any{"service": map[string]any{"name": "glance2", "type": "image2"}}); code != http.StatusOK {
		t.Fatalf("PATCH answered %d", code)
	}
	expectNames(t, s, token, Services, "/v3/services?name=glance", "the old name")
	expectNames(t, s, token, Services, "/v3/services?type=image", "the old type")
	expectNames(t, s, token, Services, "/v3/services?type=image2", "the new type", "glance2")
	expectNames(t, s, token, Services, "/v3/services", "every service, by ID, as now", "glance2", "nova")
	expectNames(t, s, token, Endpoints, "/v3/endpoints?service_id="+glance, "the service's endpoints", "glance-public")

	// A deletion takes the service, and its endpoints with it.
	if code, _ := call(t, s, token, http.MethodDelete, "/v3/services/"+glance, nil); code != http.StatusNoContent {
		t.Fatalf("DELETE answered %d", code)
	}
	expectNames(t, s, token, Services, "/v3/services?name=glance2", "a deleted service")
	expectNames(t, s, token, Endpoints, "/v3/endpoints?service_id="+glance, "a deleted service's endpoints")

	// A new entity under a name another had is found, the other not.
	post(Services, map[string]any{"name": "glance2", "type": "image"})
	if got := s.List(Services, map[string]any{"name": "glance2"}); len(got) != 1 || got[0]["type"] != "image" {
		t.Errorf("the new glance2: %v", got)
	}

	// Names compared without case, as on MariaDB: the index is not used, and finds them.
	s.FoldNames()
	expectNames(t, s, token, Users, "/v3/users?name=GLANCE", "users named GLANCE, without case", "glance")

	// A password set stays out of listings, and the listing is as it is now.
	s.SetPassword("glance", "other")
	expectNames(t, s, token, Users, "/v3/users", "users", "admin", "glance")
}

// TestListLimit: a list longer than list_limit is cut to its first entries by ID and
// says so; one that fits, as long as the limit included, says nothing.
func TestListLimit(t *testing.T) {
	s := New("admin", "pw")
	defer s.Close()
	token := login(t, s)
	for _, name := range []string{"a", "b", "c"} {
		s.Create(Services, map[string]any{"name": name, "type": name})
	}
	s.ListLimit(2)
	_, body := call(t, s, token, http.MethodGet, "/v3/services", nil)
	if body["truncated"] != true {
		t.Errorf("3 services, a limit of 2: truncated: %v", body)
	}
	expectNames(t, s, token, Services, "/v3/services", "the first 2 by ID", "a", "b")
	_, body = call(t, s, token, http.MethodGet, "/v3/services?name=a", nil)
	if _, ok := body["truncated"]; ok || len(body[Services].([]any)) != 1 {
		t.Errorf("one, not truncated: %v", body)
	}
	if links, ok := body["links"].(map[string]any); !ok || links["next"] != nil {
		t.Errorf("links.next null: %v", body)
	}
	s.ListLimit(3)
	if _, body = call(t, s, token, http.MethodGet, "/v3/services", nil); body["truncated"] != nil {
		t.Errorf("as many as the limit: not truncated: %v", body)
	}
}

// TestApplicationCredentialsByUser: a user's application credentials are found by the
// user_id index, and go with their user; Create keeps a copy of what it is given.
func TestApplicationCredentialsByUser(t *testing.T) {
	s := New("admin", "pw")
	defer s.Close()
	fields := map[string]any{"name": "glance", "domain_id": "default", "password": "pw"}
	user := s.Create(Users, fields)
	fields["name"] = "changed by the caller"
	if got := s.List(Users, map[string]any{"name": "glance"}); len(got) != 1 || got[0]["id"] != user {
		t.Errorf("the user as created: %v", got)
	}
	other := s.Create(Users, map[string]any{"name": "nova", "domain_id": "default", "password": "pw"})
	mine := s.Create(AppCreds, map[string]any{"user_id": user, "name": "one"})
	s.Create(AppCreds, map[string]any{"user_id": other, "name": "two"})
	if got := s.AppCredIDs("glance"); !slices.Equal(got, []string{mine}) {
		t.Errorf("glance's credentials: %v, want [%s]", got, mine)
	}
	s.Delete(Users, user)
	if got := s.List(AppCreds, map[string]any{"user_id": user}); len(got) != 0 {
		t.Errorf("a deleted user's credentials are found: %v", got)
	}
	if got := s.List(AppCreds, map[string]any{"user_id": other}); len(got) != 1 {
		t.Errorf("the other user's credential: %v", got)
	}
}
