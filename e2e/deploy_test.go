package e2e

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/embedded"
	"github.com/talaria-agent/talaria/internal/fakellm"
)

// TestChatExternalTemporal: with --temporal-address and --namespace, chat
// uses an external Temporal server (here one started by the test) instead
// of embedding its own.
func TestChatExternalTemporal(t *testing.T) {
	t.Parallel()
	srv, err := embedded.Start(context.Background(), embedded.Options{
		Ephemeral: true, Namespace: "external-ns", Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	model := fakellm.New(fakellm.TextStep("hello from outside"))
	defer model.Close()
	u := newUser(t, model.URL())
	res, stderr, code := u.chatJSON(2*time.Minute, "-q", "hi", "--temporal-address", srv.HostPort(), "--namespace", "external-ns")
	if code != 0 || !res.Completed || *res.FinalResponse != "hello from outside" {
		t.Fatalf("exit %d: %+v\n%s", code, res, stderr)
	}
	// The embedded server was not started: no Temporal files in the home.
	if _, err := os.Stat(u.home + "/temporal"); !os.IsNotExist(err) {
		t.Fatalf("chat embedded a server although an address was given: %v", err)
	}
	// Environment variables work the same way.
	model.Push(fakellm.TextStep("again"))
	u.env["TEMPORAL_ADDRESS"] = srv.HostPort()
	u.env["TEMPORAL_NAMESPACE"] = "external-ns"
	res, stderr, code = u.chatJSON(2*time.Minute, "-q", "hi")
	if code != 0 || !res.Completed {
		t.Fatalf("exit %d: %+v\n%s", code, res, stderr)
	}
	// A wrong address is a clear configuration error.
	u.env["TEMPORAL_ADDRESS"] = "127.0.0.1:1"
	_, stderr, code = u.run(time.Minute, "chat", "-q", "hi")
	if code != 2 || !strings.Contains(stderr, "temporal") {
		t.Fatalf("unreachable temporal: exit %d, %s", code, stderr)
	}
}

// TestChatPostgresStore: the same turn with the store on PostgreSQL.
func TestChatPostgresStore(t *testing.T) {
	t.Parallel()
	dsn := os.Getenv("TALARIA_TEST_POSTGRES_DSN")
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("TALARIA_TEST_POSTGRES_DSN is not set in CI")
		}
		t.Skip("TALARIA_TEST_POSTGRES_DSN not set (run through scripts/with-postgres.sh)")
	}
	model := fakellm.New(
		fakellm.ToolStep(fakellm.ToolCall{Name: "write_file", Arguments: `{"path":"pg.txt","content":"pg"}`}),
		fakellm.TextStep("stored in postgres"),
	)
	defer model.Close()
	u := newUser(t, model.URL())
	session := "pg-" + strings.ReplaceAll(t.Name(), "/", "-") + "-" + time.Now().Format("150405.000000")
	res, stderr, code := u.chatJSON(2*time.Minute, "-q", "write", "--db", dsn, "--session", session)
	if code != 0 || !res.Completed || len(res.Messages) != 4 {
		t.Fatalf("exit %d: %+v\n%s", code, res, stderr)
	}
	if _, err := os.Stat(u.home + "/talaria.db"); !os.IsNotExist(err) {
		t.Fatalf("a SQLite store was created although --db named PostgreSQL: %v", err)
	}
}

// TestChatInteractive: without -q, chat runs one turn per input line in one
// session and exits on end of input.
func TestChatInteractive(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.TextStep("first answer"), fakellm.TextStep("second answer"))
	defer model.Close()
	u := newUser(t, model.URL())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := u.command(ctx, "chat", "--session", "repl")
	cmd.Stdin = strings.NewReader("hello\n\nagain\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chat: %v\n%s", err, out)
	}
	if got := string(out); got != "first answer\nsecond answer\n" {
		t.Fatalf("stdout = %q", got)
	}
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("requests = %d", len(reqs))
	}
	// The second turn sees the first: same session.
	msgs := reqs[1].Body.Messages
	if len(msgs) != 4 || msgs[1].Content != "hello" || msgs[2].Content != "first answer" || msgs[3].Content != "again" {
		t.Fatalf("second request messages = %+v", msgs)
	}
}
