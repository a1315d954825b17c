package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/fakesmtp"
)

// TestEmailDelivery: a cron job delivering to email:<address> sends one
// multipart message per run through the configured SMTP server, with the
// job and the slot in its subject; the run records the delivery.
func TestEmailDelivery(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.WithResponder(func(fakellm.Request) fakellm.Step {
		return fakellm.TextStep("Overnight: all **quiet**.")
	}))
	defer model.Close()
	mail, err := fakesmtp.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer mail.Close()
	u := newUser(t, model.URL())
	if err := os.MkdirAll(u.home, 0o700); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf("delivery:\n  smtp:\n    host: %s\n    port: %d\n    from: Talaria <bot@example.com>\n    security: none\n", mail.Host(), mail.Port())
	if err := os.WriteFile(filepath.Join(u.home, "config.yaml"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	u.serve(0)
	cronDelivering(t, u, "report", "email:ops@example.com", "email:Ops <ops@example.com>", "email:<address>")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	got, err := mail.Wait(ctx, 1)
	if err != nil {
		t.Fatalf("no mail: %v", err)
	}
	m := got[0]
	if len(m.To) != 1 || m.To[0] != "ops@example.com" || !strings.Contains(m.Data, "Subject: =?UTF-8?q?report_=E2=80=94_") ||
		!strings.Contains(m.Data, "text/html") || !strings.Contains(m.Data, "<strong>quiet</strong>") {
		t.Fatalf("mail %+v", m)
	}
	waitRunDelivered(t, u, "report", "email:ops@example.com")
	time.Sleep(time.Second)
	if n := len(mail.Mail()); n != 1 {
		t.Errorf("%d mails, want one", n)
	}
}
