package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// BenchmarkACPFirstUpdate (issue #33, criterion 4): from starting the
// process to the first piece of the answer, with a serve running and a
// model that answers at once, for `talaria chat -q` (the first byte of the
// reply on stdout) and for `talaria acp` (an editor's initialize,
// session/new and session/prompt, to the first agent_message_chunk). The
// two run alternately in the same run; each reports its median, and
// "acp/chat" their ratio:
//
//	go test ./e2e/ -run '^$' -bench ACPFirstUpdate -benchtime 15x
func BenchmarkACPFirstUpdate(b *testing.B) {
	model := fakellm.New()
	b.Cleanup(model.Close)
	model.SetResponder(func(fakellm.Request) fakellm.Step { return fakellm.TextStep("hello there") })
	u := newUser(b, model.URL())
	u.serve(0)
	firstChat(b, u) // the serve's first turn, untimed
	var chat, acp []time.Duration
	b.ResetTimer()
	for range b.N {
		chat = append(chat, firstChat(b, u))
		acp = append(acp, firstACP(b, u))
	}
	b.StopTimer()
	c, a := oneShotMedian(chat), oneShotMedian(acp)
	b.ReportMetric(c.Seconds()*1000, "ms-chat-median")
	b.ReportMetric(a.Seconds()*1000, "ms-acp-median")
	b.ReportMetric(a.Seconds()/c.Seconds(), "acp/chat")
}

// firstChat times `chat -q hi` from its start to the first byte on stdout.
func firstChat(b *testing.B, u *user) time.Duration {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := u.command(ctx, "chat", "-q", "hi")
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	one := make([]byte, 1)
	if _, err := io.ReadFull(out, one); err != nil {
		b.Fatalf("chat -q printed nothing: %v", err)
	}
	took := time.Since(start)
	_, _ = io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		b.Fatalf("chat -q: %v", err)
	}
	return took
}

// firstACP times `talaria acp` from its start to the first
// agent_message_chunk of a prompt in a new session.
func firstACP(b *testing.B, u *user) time.Duration {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := u.command(ctx, "acp")
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = in.Close(); _ = cmd.Wait() }()
	sc := bufio.NewScanner(out)
	send := func(line string) {
		if _, err := io.WriteString(in, line+"\n"); err != nil {
			b.Fatal(err)
		}
	}
	next := func() map[string]any {
		if !sc.Scan() {
			b.Fatalf("talaria acp ended: %v", sc.Err())
		}
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			b.Fatalf("not JSON: %s", sc.Text())
		}
		return m
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	next()
	send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, u.workdir))
	sid, _ := field(next(), "result", "sessionId").(string)
	send(fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"hi"}]}}`, sid))
	for {
		m := next()
		if field(m, "params", "update", "sessionUpdate") == "agent_message_chunk" {
			return time.Since(start)
		}
		if m["id"] == 3.0 {
			b.Fatalf("the prompt ended without a message chunk: %v", m)
		}
	}
}
