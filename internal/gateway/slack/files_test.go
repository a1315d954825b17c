package slack

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/attach"
	"github.com/talaria-agent/talaria/internal/fakeslack"
	"github.com/talaria-agent/talaria/internal/gateway"
)

// TestFilesFetchedWithToken: a DM with files is an update whose Text is
// the caption and whose Files are fetched from Slack with the bot token;
// a file told to be over max is refused without a request, one that
// turns out larger is cut off, a file kept outside Slack is never
// requested, and a Slack Connect file is found through files.info.
func TestFilesFetchedWithToken(t *testing.T) {
	t.Parallel()
	s, fs, ctx := connect(t)
	var outside atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		outside.Add(1)
		_, _ = w.Write([]byte("not Slack's"))
	}))
	defer elsewhere.Close()

	doc := bytes.Repeat([]byte("quarterly numbers\n"), 100)
	clip := []byte("OggS\x00\x02fake voice")
	fs.SendDMFiles("U42", "D42", "have a look <@"+fakeslack.BotUserID+">",
		fakeslack.File{Name: "notes.txt", MIME: "text/plain", Data: doc},
		fakeslack.File{Name: "audio_message.webm", MIME: "audio/webm", Data: clip, Voice: true},
		fakeslack.File{Name: "understated.bin", MIME: "application/octet-stream", Data: bytes.Repeat([]byte{1}, 4096), Size: 10},
		fakeslack.File{Name: "sheet.gdoc", MIME: "application/vnd.google-apps.spreadsheet", ExternalURL: elsewhere.URL + "/doc"},
		fakeslack.File{Name: "shared.txt", MIME: "text/plain", Data: []byte("from another workspace"), InfoOnly: true},
	)
	u := poll(t, ctx, s, 1)[0]
	if u.Text != "have a look" || u.User != "U42" || u.Chat.ID != "D42" || len(u.Files) != 5 {
		t.Fatalf("update %+v", u)
	}
	f := u.Files
	if f[0].Name != "notes.txt" || f[0].MIME != "text/plain" || f[0].Size != int64(len(doc)) || f[0].Voice {
		t.Errorf("the document: %+v", f[0])
	}
	if f[1].Name != "audio_message.webm" || !f[1].Voice {
		t.Errorf("the audio clip: %+v", f[1])
	}
	if data, err := f[0].Fetch(ctx, 1<<20); err != nil || !bytes.Equal(data, doc) {
		t.Fatalf("the document fetched: %d bytes, %v", len(data), err)
	}
	if data, err := f[1].Fetch(ctx, 1<<20); err != nil || !bytes.Equal(data, clip) {
		t.Fatalf("the clip fetched: %q, %v", data, err)
	}
	before := len(fs.Fetches())
	if _, err := f[0].Fetch(ctx, 100); !errors.Is(err, attach.ErrTooLarge) {
		t.Fatalf("a file told to be over max: %v", err)
	}
	if n := len(fs.Fetches()); n != before {
		t.Errorf("a file told to be over max was requested anyway (%d requests, %d before)", n, before)
	}
	if _, err := f[2].Fetch(ctx, 1000); !errors.Is(err, attach.ErrTooLarge) {
		t.Fatalf("a file larger than told: %v", err)
	}
	if _, err := f[3].Fetch(ctx, 1<<20); err == nil || errors.Is(err, attach.ErrTooLarge) {
		t.Fatalf("a file kept outside Slack: %v", err)
	}
	if n := outside.Load(); n != 0 {
		t.Errorf("the URL outside Slack was requested %d times", n)
	}
	if data, err := f[4].Fetch(ctx, 1<<20); err != nil || string(data) != "from another workspace" {
		t.Fatalf("a file known by its id alone: %q, %v", data, err)
	}
	for _, fe := range fs.Fetches() {
		if !fe.Authorized {
			t.Errorf("a download without the bot token: %+v", fe)
		}
	}
	if err := s.Ack(ctx, u); err != nil {
		t.Fatal(err)
	}

	// In a channel, the files come with the mention.
	ts := fs.MentionFiles("U42", "C1", "what is this?", "", fakeslack.File{Name: "shot.png", MIME: "image/png", Data: []byte("\x89PNG\r\n\x1a\n")})
	m := poll(t, ctx, s, 1)[0]
	if m.Text != "what is this?" || m.Chat.ID != "C1:"+ts || len(m.Files) != 1 || m.Files[0].MIME != "image/png" || m.Files[0].Voice {
		t.Fatalf("a mention with a picture: %+v", m)
	}
	if data, err := m.Files[0].Fetch(ctx, 1<<20); err != nil || !bytes.HasPrefix(data, []byte("\x89PNG")) {
		t.Fatalf("the picture fetched: %q, %v", data, err)
	}
}

// TestSendFile: SendFile uploads through files.getUploadURLExternal, the
// upload URL and files.completeUploadExternal; the document lands in the
// chat (its thread), the text as its comment; the file's message Slack
// echoes into the DM is no update; an empty file is undeliverable.
func TestSendFile(t *testing.T) {
	t.Parallel()
	s, fs, ctx := connect(t)
	report := []byte("# Report\n\nAll quiet.\n")
	id, err := s.SendFile(ctx, gateway.Outgoing{ChatID: "D42", Text: "Here is **the report**."}, gateway.OutFile{Name: "report.md", MIME: "text/markdown", Data: report})
	if err != nil {
		t.Fatal(err)
	}
	ups := fs.Uploads()
	if len(ups) != 1 || ups[0].ID != id || ups[0].Channel != "D42" || ups[0].Name != "report.md" || !bytes.Equal(ups[0].Data, report) ||
		ups[0].Comment != "Here is *the report*." || ups[0].ThreadTS != "" {
		t.Fatalf("uploads %+v", ups)
	}

	root := fs.Mention("U42", "C1", "send it here", "")
	if _, err := s.SendFile(ctx, gateway.Outgoing{ChatID: ChatID("C1", root)}, gateway.OutFile{Name: "data.csv", MIME: "text/csv", Data: []byte("a,b\n1,2\n")}); err != nil {
		t.Fatal(err)
	}
	if ups = fs.Uploads(); len(ups) != 2 || ups[1].Channel != "C1" || ups[1].ThreadTS != root || ups[1].MIME != "text/csv" || ups[1].Comment != "" {
		t.Fatalf("the upload into a thread: %+v", ups)
	}
	if _, err := s.SendFile(ctx, gateway.Outgoing{ChatID: "D42"}, gateway.OutFile{Name: "empty.txt"}); !errors.Is(err, gateway.ErrUndeliverable) {
		t.Fatalf("an empty file: %v", err)
	}
	fs.FailNext("files.completeUploadExternal", "channel_not_found")
	if _, err := s.SendFile(ctx, gateway.Outgoing{ChatID: "C404"}, gateway.OutFile{Name: "x.txt", Data: []byte("x")}); err == nil || strings.Contains(err.Error(), "secret") {
		t.Fatalf("an upload Slack refuses: %v", err)
	}

	// Only the mention is an update: the echo of the DM's file is the bot's own.
	u := poll(t, ctx, s, 1)
	if len(u) != 1 || u[0].Text != "send it here" {
		t.Fatalf("updates %+v", u)
	}
	if err := s.Ack(ctx, u[0]); err != nil {
		t.Fatal(err)
	}
	ctx2, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	if ups, err := s.Poll(ctx2); len(ups) != 0 || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("after the uploads: %+v %v", ups, err)
	}
}
