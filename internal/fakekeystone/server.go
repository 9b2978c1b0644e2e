package fakekeystone

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"
)

// Server is a fake Keystone. Its zero value is not usable; call New.
type Server struct {
	*httptest.Server

	mu    sync.Mutex
	users map[string]string // name -> password
	// fault, when set, answers every request instead of the handlers.
	fault atomic.Value // func(http.ResponseWriter, *http.Request) bool

	// Authentications counts POST /v3/auth/tokens.
	Authentications atomic.Int64
}

// New starts a fake Keystone on 127.0.0.1 with one user.
func New(user, password string) *Server {
	s := &Server{users: map[string]string{user: password}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v3/auth/tokens", s.issueToken)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f, ok := s.fault.Load().(func(http.ResponseWriter, *http.Request) bool); ok && f != nil && f(w, r) {
			return
		}
		mux.ServeHTTP(w, r)
	}))
	return s
}

// SetPassword sets (or adds) a user's password.
func (s *Server) SetPassword(user, password string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[user] = password
}

// Fail makes the server answer with status code until Heal; 0 closes connections.
func (s *Server) Fail(code int) {
	s.fault.Store(func(w http.ResponseWriter, _ *http.Request) bool {
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
	})
}

// Heal ends a fault.
func (s *Server) Heal() {
	s.fault.Store(func(http.ResponseWriter, *http.Request) bool { return false })
}

type authRequest struct {
	Auth struct {
		Identity struct {
			Password struct {
				User struct {
					Name     string `json:"name"`
					Password string `json:"password"`
				} `json:"user"`
			} `json:"password"`
		} `json:"identity"`
	} `json:"auth"`
}

func (s *Server) issueToken(w http.ResponseWriter, r *http.Request) {
	s.Authentications.Add(1)
	var req authRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "malformed request")
		return
	}
	u := req.Auth.Identity.Password.User
	s.mu.Lock()
	want, ok := s.users[u.Name]
	s.mu.Unlock()
	if !ok || want != u.Password {
		writeError(w, http.StatusUnauthorized, "The request you have made requires authentication.")
		return
	}
	w.Header().Set("X-Subject-Token", "tok-"+u.Name)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(map[string]any{"token": map[string]any{
		"expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
		"user":       map[string]any{"name": u.Name, "id": "id-" + u.Name},
		"catalog":    []any{},
	}})
}

func writeError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": code, "message": msg}})
}
