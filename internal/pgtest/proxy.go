package pgtest

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
)

// Proxy forwards TCP connections to a database server and can drop them
// all and refuse new ones, as a database server that goes away does, then
// take connections again on the same address.
type Proxy struct {
	t      testing.TB
	target string
	addr   string
	mu     sync.Mutex
	ln     net.Listener
	conns  []net.Conn
}

// StartProxy listens on a free local port and forwards to target
// (host:port); it is taken down when the test ends.
func StartProxy(t testing.TB, target string) *Proxy {
	p := &Proxy{t: t, target: target}
	p.listen("127.0.0.1:0")
	t.Cleanup(p.Down)
	return p
}

// Addr is the proxy's host:port, to put in place of the server's in a DSN.
func (p *Proxy) Addr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.addr
}

// Up takes connections again, on the same address, after Down.
func (p *Proxy) Up() { p.listen(p.Addr()) }

func (p *Proxy) listen(addr string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		p.t.Fatal(err)
	}
	p.mu.Lock()
	p.ln, p.addr = ln, ln.Addr().String()
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, s)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(s, c); s.Close() }()
			go func() { _, _ = io.Copy(c, s); c.Close() }()
		}
	}()
}

// Down drops every connection and refuses new ones until Up.
func (p *Proxy) Down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// Proxied returns dsn reached through a new Proxy (taken down when the
// test ends), with a one-second connect timeout so that a connection tried
// while the proxy is down fails fast, and the Proxy.
func Proxied(t testing.TB, dsn string) (string, *Proxy) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("parse the DSN: %v", err)
	}
	p := StartProxy(t, u.Host)
	u.Host = p.Addr()
	q := u.Query()
	q.Set("connect_timeout", "1")
	u.RawQuery = q.Encode()
	return u.String(), p
}
