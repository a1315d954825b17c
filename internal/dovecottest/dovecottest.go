// Package dovecottest starts a real IMAP server for a test: Debian's
// Dovecot (dovecot-imapd, which scripts/ensure-test-packages.sh installs),
// on a free loopback port, with a throwaway configuration and mail store
// and one user. Without Dovecot the test is skipped, or fails when
// CI=true: CI must run the IMAP tests.
package dovecottest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap"
	"github.com/emersion/go-imap/client"
)

// Binary is Dovecot's master process.
const Binary = "/usr/sbin/dovecot"

// Server is a running Dovecot with one user.
type Server struct {
	Host           string
	Port           int
	User, Password string
	dir            string
}

// Start starts Dovecot for t with the user address; it stops when t ends.
func Start(t testing.TB, address string) *Server {
	t.Helper()
	if _, err := os.Stat(Binary); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("dovecot is not installed (scripts/ensure-test-packages.sh installs dovecot-imapd): %v", err)
		}
		t.Skipf("dovecot is not installed (apt-get install dovecot-imapd): %v", err)
	}
	// Dovecot's mail processes need every directory above the store to be
	// searchable by the mail user, which t.TempDir's are not.
	dir, err := os.MkdirTemp("", "dovecot-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s := &Server{Host: "127.0.0.1", Port: freePort(t), User: address, Password: randomHex(12), dir: dir}
	uid, gid, login := mailUser(t)
	for _, d := range []string{"run", "state", "mail"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(filepath.Join(dir, "mail"), uid, gid); err != nil && os.Geteuid() == 0 {
		t.Fatal(err)
	}
	users := fmt.Sprintf("%s:{PLAIN}%s\n", address, s.Password)
	if err := os.WriteFile(filepath.Join(dir, "users"), []byte(users), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf(`base_dir = %[1]s/run
state_dir = %[1]s/state
log_path = %[1]s/dovecot.log
instance_name = talaria-test-%[2]d
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain
first_valid_uid = 1
mail_location = maildir:%[1]s/mail/%%u
%[5]s
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%%u %[1]s/users
}
userdb {
  driver = static
  args = uid=%[3]d gid=%[4]d home=%[1]s/mail/%%u
}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = %[2]d
  }
  inet_listener imaps {
    port = 0
  }
  chroot =
}
service anvil {
  chroot =
}
`, dir, s.Port, uid, gid, login)
	if err := os.WriteFile(filepath.Join(dir, "dovecot.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(Binary, "-F", "-c", filepath.Join(dir, "dovecot.conf"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start dovecot: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		c, err := net.DialTimeout("tcp", s.Addr(), time.Second)
		if err == nil {
			_ = c.Close()
			return s
		}
		if ctx.Err() != nil {
			log, _ := os.ReadFile(filepath.Join(dir, "dovecot.log"))
			t.Fatalf("dovecot did not listen on %s: %v\n%s%s", s.Addr(), err, out.String(), log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Addr is the IMAP address, host:port.
func (s *Server) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// Log is Dovecot's log so far.
func (s *Server) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "dovecot.log"))
	return string(b)
}

// mailUser is who mail processes run as: nobody when this is root
// (Dovecot refuses root), else the current user, who then runs every
// Dovecot process (its login and internal users too).
func mailUser(t testing.TB) (uid, gid int, settings string) {
	t.Helper()
	if os.Geteuid() == 0 {
		return 65534, 65534, ""
	}
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid, fmt.Sprintf("default_login_user = %[1]s\ndefault_internal_user = %[1]s", u.Username)
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Deliver puts a message in the user's INBOX (IMAP APPEND), as the mail
// server does when it arrives.
func (s *Server) Deliver(t testing.TB, raw string) {
	t.Helper()
	c := s.dial(t)
	defer c.Logout()
	if err := c.Append("INBOX", nil, time.Now(), bytes.NewBufferString(strings.ReplaceAll(raw, "\n", "\r\n"))); err != nil {
		t.Fatalf("append: %v", err)
	}
}

// Flagged is a message in the INBOX and its flags (keywords as the
// client library spells them: lower-case).
type Flagged struct {
	MessageID string
	Flags     []string
}

// Flags are the flags of each message in the INBOX, in order.
func (s *Server) Flags(t testing.TB) []Flagged {
	t.Helper()
	c := s.dial(t)
	defer c.Logout()
	mb, err := c.Select("INBOX", true)
	if err != nil {
		t.Fatalf("select: %v", err)
	}
	var out []Flagged
	if mb.Messages == 0 {
		return out
	}
	seq := new(imap.SeqSet)
	seq.AddRange(1, mb.Messages)
	ch := make(chan *imap.Message, 16)
	done := make(chan error, 1)
	go func() { done <- c.Fetch(seq, []imap.FetchItem{imap.FetchEnvelope, imap.FetchFlags}, ch) }()
	// The server may also send a flags-only update of a message another
	// client changed meanwhile (no envelope): each message is kept by its
	// sequence number, its id from the response that has one, its flags
	// from the last.
	bySeq := map[uint32]*Flagged{}
	var order []uint32
	for m := range ch {
		f, ok := bySeq[m.SeqNum]
		if !ok {
			f = &Flagged{}
			bySeq[m.SeqNum] = f
			order = append(order, m.SeqNum)
		}
		if m.Envelope != nil {
			f.MessageID = m.Envelope.MessageId
		}
		if m.Flags != nil {
			f.Flags = m.Flags
		}
	}
	if err := <-done; err != nil {
		t.Fatalf("fetch: %v", err)
	}
	slices.Sort(order)
	for _, seq := range order {
		out = append(out, *bySeq[seq])
	}
	return out
}

func (s *Server) dial(t testing.TB) *client.Client {
	t.Helper()
	c, err := client.Dial(s.Addr())
	if err != nil {
		t.Fatalf("dial %s: %v", s.Addr(), err)
	}
	if err := c.Login(s.User, s.Password); err != nil {
		t.Fatalf("login: %v", err)
	}
	return c
}
