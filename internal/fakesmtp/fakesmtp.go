// Package fakesmtp is an in-process SMTP server (github.com/emersion/
// go-smtp) that keeps what it receives: the one stand-in for a mail server
// in Talaria's tests, spoken to over real SMTP.
package fakesmtp

import (
	"context"
	"io"
	"net"
	"sync"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/talaria-agent/talaria/internal/fakewire"
)

// Mail is one message received.
type Mail struct {
	From string
	To   []string
	Data string
}

// Server is a running SMTP server on a loopback port.
type Server struct {
	srv *smtp.Server
	ln  net.Listener

	mu   sync.Mutex
	mail []Mail
}

// Start listens on a free loopback port (plain SMTP, no authentication).
func Start() (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{ln: ln}
	s.srv = smtp.NewServer(backend{s})
	s.srv.Domain = "localhost"
	s.srv.ReadTimeout, s.srv.WriteTimeout = 10*time.Second, 10*time.Second
	s.srv.MaxMessageBytes = 16 << 20
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Host and Port are where the server listens.
func (s *Server) Host() string { return "127.0.0.1" }
func (s *Server) Port() int    { return s.ln.Addr().(*net.TCPAddr).Port }

// Close stops the server.
func (s *Server) Close() { _ = s.srv.Close() }

// Mail is what the server received, in order.
func (s *Server) Mail() []Mail {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Mail(nil), s.mail...)
}

// Wait waits until n messages arrived, or ctx ends.
func (s *Server) Wait(ctx context.Context, n int) ([]Mail, error) {
	return fakewire.Wait(ctx, s.Mail, func(m []Mail) bool { return len(m) >= n })
}

type backend struct{ s *Server }

func (b backend) NewSession(*smtp.Conn) (smtp.Session, error) { return &session{s: b.s}, nil }

type session struct {
	s *Server
	m Mail
}

func (x *session) Reset()        { x.m = Mail{} }
func (x *session) Logout() error { return nil }
func (x *session) Mail(from string, _ *smtp.MailOptions) error {
	x.m.From = from
	return nil
}
func (x *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	x.m.To = append(x.m.To, to)
	return nil
}
func (x *session) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	x.m.Data = string(b)
	x.s.mu.Lock()
	x.s.mail = append(x.s.mail, x.m)
	x.s.mu.Unlock()
	return nil
}
