package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/pgtest"
)

// What hostile bytes can reach the store, and how:
//   - a NUL byte arrives in a model reply, as the JSON escape "\u0000";
//   - invalid UTF-8 cannot come from the model as such (its replies are
//     JSON, and the client's JSON decoder turns invalid bytes and lone
//     surrogate escapes into U+FFFD, the same on both stores), nor from a user message (it travels in a JSON workflow
//     payload), nor from a tool (results are JSON documents: a Latin-1
//     file read with read_file reaches the store with U+FFFD in place of
//     its bytes); it does come from the command line, e.g. the prompt of a
//     cron job, which the CLI writes to the store directly.

// latin1File is a text file in Latin-1, not UTF-8.
const latin1File = "caf\xe9 cr\xe8me \xff\xfe br\xfbl\xe9e\n"

// latin1AsRead is latin1File in the tool result: each invalid byte is
// U+FFFD.
const latin1AsRead = "caf\uFFFD cr\uFFFDme \uFFFD\uFFFD br\uFFFDl\uFFFDe"

// nulReply is a final reply holding NUL bytes and text that looks like
// the store's own escape.
const nulReply = "before\x00after \x00\x00 and \uFDD00\uFDD0 end"

// rawReply is a streamed reply sent byte for byte as a provider could send
// it: a NUL byte (as the JSON escape) and bytes that are not UTF-8, raw
// inside the JSON string.
const rawReply = "data: {\"id\":\"raw\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"fake-model\"," +
	"\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"nul\\u0000 and caf\xe9 \xff\xfe raw\"},\"finish_reason\":null}]}\n\n" +
	"data: {\"id\":\"raw\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"fake-model\"," +
	"\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n" +
	"data: [DONE]\n\n"

// rawAsStored is rawReply's text as the client decodes it: the NUL kept,
// each byte that is not UTF-8 replaced by U+FFFD.
const rawAsStored = "nul\x00 and caf\uFFFD \uFFFD\uFFFD raw"

// TestHostileTextRoundTripsOnBothStores: a turn whose reply holds NUL
// bytes (and whose tool read a Latin-1 file) completes on SQLite and on
// PostgreSQL, and `talaria sessions show` prints the same bytes from both,
// the bytes that arrived; a cron job whose prompt is not UTF-8 is stored on
// both.
func TestHostileTextRoundTripsOnBothStores(t *testing.T) {
	t.Parallel()
	pgDSN := pgtest.DSN(t, "lossless")
	shows := map[string]string{}
	for _, store := range []string{"sqlite", "postgres"} {
		t.Run(store, func(t *testing.T) {
			model := fakellm.New(
				fakellm.ToolStep(fakellm.ToolCall{ID: "call_1", Name: "read_file", Arguments: `{"path":"latin1.txt"}`}),
				fakellm.TextStep(nulReply),
				fakellm.Step{Body: rawReply, ContentType: "text/event-stream"},
			)
			defer model.Close()
			u := newUser(t, model.URL())
			if store == "postgres" {
				u.env["TALARIA_DB"] = pgDSN
			}
			if err := os.WriteFile(filepath.Join(u.workdir, "latin1.txt"), []byte(latin1File), 0o600); err != nil {
				t.Fatal(err)
			}
			stdout, stderr, code := u.run(2*time.Minute, "chat", "--session", "hostile", "-q", "read latin1.txt")
			if code != 0 {
				t.Fatalf("chat exit %d\nstdout:\n%q\nstderr:\n%s", code, stdout, stderr)
			}
			if !strings.Contains(stdout, nulReply) {
				t.Errorf("chat printed %q, want the reply %q byte for byte", stdout, nulReply)
			}
			// The model was shown the file's text.
			reqs := model.Requests()
			if len(reqs) != 2 {
				t.Fatalf("model calls before the second message = %d, want 2", len(reqs))
			}

			stdout, stderr, code = u.run(2*time.Minute, "chat", "--session", "hostile", "-q", "again, raw")
			if code != 0 {
				t.Fatalf("second chat exit %d\nstdout:\n%q\nstderr:\n%s", code, stdout, stderr)
			}
			if !strings.Contains(stdout, rawAsStored) {
				t.Errorf("chat printed %q, want the raw reply as decoded %q", stdout, rawAsStored)
			}

			show, stderr, code := u.run(time.Minute, "sessions", "show", "hostile")
			if code != 0 {
				t.Fatalf("sessions show exit %d: %s", code, stderr)
			}
			if !strings.Contains(show, "assistant: "+nulReply+"\n") {
				t.Errorf("sessions show lacks the reply byte for byte:\n%q", show)
			}
			if !strings.Contains(show, "assistant: "+rawAsStored+"\n") {
				t.Errorf("sessions show lacks the raw reply as decoded:\n%q", show)
			}
			if !strings.Contains(show, latin1AsRead) {
				t.Errorf("sessions show lacks the tool output as read:\n%q", show)
			}
			// The header names the creation time; the conversation follows
			// the first blank line.
			_, conversation, ok := strings.Cut(show, "\n\n")
			if !ok {
				t.Fatalf("sessions show has no conversation:\n%q", show)
			}
			shows[store] = conversation

			out, stderr, code := u.run(time.Minute, "cron", "add", "--name", "latin1", "--schedule", "@daily",
				"--prompt", "r\xe9sum\xe9 \xff of the day")
			if code != 0 {
				t.Fatalf("cron add with a Latin-1 prompt: exit %d\n%s%s", code, out, stderr)
			}
			// The text view prints the prompt byte for byte, as stored.
			out, stderr, code = u.run(time.Minute, "cron", "show", "latin1")
			if code != 0 || !strings.Contains(out, "r\xe9sum\xe9 \xff of the day") {
				t.Errorf("cron show: exit %d\n%q%s", code, out, stderr)
			}
		})
	}
	if len(shows) == 2 && shows["sqlite"] != shows["postgres"] {
		t.Errorf("sessions show differs between the stores:\nsqlite:   %q\npostgres: %q", shows["sqlite"], shows["postgres"])
	}
}
