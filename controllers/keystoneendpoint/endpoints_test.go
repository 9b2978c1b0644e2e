package keystoneendpoint

import "testing"

func TestInvalidEndpoints(t *testing.T) {
	for _, tc := range []struct {
		name      string
		endpoints map[string]string
		problem   string
		pending   bool
	}{
		{"absolute URLs", map[string]string{"public": "https://glance.example.com", "internal": "http://glance-internal:9292"}, "", false},
		{"a service operator's URL before its Route has a host", map[string]string{"public": "http://", "internal": "http://glance-internal:9292"},
			`waiting for a host in the public endpoint "http://" (its operator sets it once its Route has one)`, true},
		{"an unknown interface", map[string]string{"private": "http://glance:9292"},
			`endpoint interface "private" is not public, internal or admin`, false},
		{"no scheme", map[string]string{"public": "glance:9292"},
			`the public endpoint "glance:9292" is not an absolute http or https URL, for example http://glance-internal.openstack.svc:9292`, false},
		{"a relative URL", map[string]string{"internal": "/v2"},
			`the internal endpoint "/v2" is not an absolute http or https URL, for example http://glance-internal.openstack.svc:9292`, false},
		{"another scheme", map[string]string{"admin": "ftp://glance"},
			`the admin endpoint "ftp://glance" is not an absolute http or https URL, for example http://glance-internal.openstack.svc:9292`, false},
		{"a wrong URL wins over a pending one", map[string]string{"internal": "http://", "public": "ftp://glance"},
			`the public endpoint "ftp://glance" is not an absolute http or https URL, for example http://glance-internal.openstack.svc:9292`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			problem, pending := invalidEndpoints(tc.endpoints)
			if problem != tc.problem || pending != tc.pending {
				t.Errorf("invalidEndpoints(%v) = %q, %v; want %q, %v", tc.endpoints, problem, pending, tc.problem, tc.pending)
			}
		})
	}
}
