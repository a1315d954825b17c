package e2e

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// TestACPEditorPicture: the official ACP client sends a prompt with a
// picture. Initialize says prompts take images; the picture is saved into
// the session's working directory, the prompt's text names it, and a
// model that sees gets it as an image part carrying its bytes. An image
// block that is no picture refuses its prompt with invalid params naming
// it, and no model call is made for it.
func TestACPEditorPicture(t *testing.T) {
	t.Parallel()
	script := acpClientScript(t)
	model := fakellm.New(fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
		last, _ := req.LastMessage()
		if strings.Contains(messageText(last), "[image attached:") {
			return fakellm.TextStep("a red dot")
		}
		return fakellm.TextStep("no picture here")
	}))
	defer model.Close()
	u := newUser(t, model.URL())
	if err := os.MkdirAll(u.home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(u.home, "config.yaml"), []byte("models:\n  fake-model:\n    vision: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	u.serve(0)
	photo := redDot(t)

	ed := startEditor(t, u, script, "picture", u.workdir, base64.StdEncoding.EncodeToString(photo))
	init := ed.await(t, time.Minute, "the initialize response", isResponse("initialize"))
	if field(init, "result", "agentCapabilities", "promptCapabilities", "image") != true {
		t.Fatalf("initialize does not take images: %v", init)
	}
	res := ed.await(t, 2*time.Minute, "the picture prompt's answer", isResponse("session/prompt"))
	if field(res, "result", "stopReason") != "end_turn" {
		t.Fatalf("the picture prompt: %v", res)
	}
	var reply strings.Builder
	for _, up := range ed.updates() {
		if up["sessionUpdate"] == "agent_message_chunk" {
			reply.WriteString(field(up, "content", "text").(string))
		}
	}
	if !strings.Contains(reply.String(), "a red dot") {
		t.Fatalf("the editor was told %q", reply.String())
	}
	wantPicture(t, model, photo, "what is this?")
	rel := attachedPath(t, messageText(lastUserMessage(lastRequestWith(t, model, "[image attached:"))), "[image attached: ")
	if !strings.HasSuffix(rel, "/red-dot.png") {
		t.Fatalf("the picture was saved as %s, want its name from the editor", rel)
	}
	if got, err := os.ReadFile(filepath.Join(u.workdir, rel)); err != nil || string(got) != string(photo) {
		t.Fatalf("the picture in the working directory at %s: %d bytes, %v", rel, len(got), err)
	}

	refused := ed.await(t, time.Minute, "the refusal of an image that is no picture", func(m map[string]any) bool {
		return m["event"] == "refused" || m["event"] == "accepted"
	})
	msg, _ := field(refused, "data", "error").(string)
	if refused["event"] != "refused" || refused["code"] != float64(-32602) || !strings.Contains(msg, "prompt[0] is not a JPEG, PNG, GIF or WebP picture") {
		t.Fatalf("an image that is no picture: %v", refused)
	}
	ed.await(t, time.Minute, "the end of the script", isEvent("done"))
	if n := len(model.Requests()); n != 1 {
		t.Fatalf("the model was asked %d times, want once", n)
	}
}
