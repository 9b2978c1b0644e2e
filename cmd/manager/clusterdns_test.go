package manager

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// dnsServer answers every A question with 127.0.0.1 and records the names asked.
type dnsServer struct {
	conn  net.PacketConn
	mu    sync.Mutex
	asked []string
}

func (d *dnsServer) serve() {
	buf := make([]byte, 512)
	for {
		n, addr, err := d.conn.ReadFrom(buf)
		if err != nil {
			return
		}
		var p dnsmessage.Parser
		hdr, err := p.Start(buf[:n])
		if err != nil {
			continue
		}
		q, err := p.Question()
		if err != nil {
			continue
		}
		d.mu.Lock()
		d.asked = append(d.asked, q.Name.String())
		d.mu.Unlock()
		b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: hdr.ID, Response: true, Authoritative: true})
		_ = b.StartQuestions()
		_ = b.Question(q)
		_ = b.StartAnswers()
		if q.Type == dnsmessage.TypeA {
			_ = b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 5},
				dnsmessage.AResource{A: [4]byte{127, 0, 0, 1}})
		}
		out, _ := b.Finish()
		_, _ = d.conn.WriteTo(out, addr)
	}
}

func TestClusterDNSTransport(t *testing.T) {
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	dns := &dnsServer{conn: conn}
	go dns.serve()
	keystone := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer keystone.Close()
	_, port, _ := net.SplitHostPort(keystone.Listener.Addr().String())

	client := &http.Client{Transport: ClusterDNSTransport(conn.LocalAddr().String(), "cluster.local")}
	resp, err := client.Get("http://keystone-internal.openstack.svc:" + port + "/v3")
	if err != nil {
		t.Fatalf("GET through the cluster DNS: %v", err)
	}
	_ = resp.Body.Close()
	dns.mu.Lock()
	defer dns.mu.Unlock()
	for _, name := range dns.asked {
		if name != "keystone-internal.openstack.svc.cluster.local." {
			t.Errorf("asked the cluster DNS for %q, want the name with the cluster domain", name)
		}
	}
	if len(dns.asked) == 0 {
		t.Error("the cluster DNS was not asked")
	}
}
