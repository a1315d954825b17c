package discord

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/talaria-agent/talaria/internal/attach"
	"github.com/talaria-agent/talaria/internal/fakediscord"
	"github.com/talaria-agent/talaria/internal/gateway"
)

// TestFilesIn: a DM's document, a voice message and a mention's picture
// are updates with their files, which download from the CDN at their
// signed URLs without the bot's token; a file Discord says is over the
// limit is refused without a request, and one that turns out larger than
// told is refused by what arrives.
func TestFilesIn(t *testing.T) {
	t.Parallel()
	d, fd := connect(t)
	waitConnected(t, d, fd)
	doc := []byte("quarterly numbers\n")
	ogg := append([]byte("OggS\x00\x02"), make([]byte, 40)...)
	png := []byte("\x89PNG\r\n\x1a\n fake picture")
	big := bytes.Repeat([]byte("x"), 5000)
	fd.SendDMFiles("42", "see attached", fakediscord.File{Name: "notes.txt", ContentType: "text/plain; charset=utf-8", Data: doc})
	fd.SendVoice("42", ogg, 2.5)
	ch := fd.TextChannel()
	mention := fd.MentionFiles("42", ch, "what is this?", fakediscord.File{Name: "cat.png", ContentType: "image/png", Data: png})
	fd.SendDMFiles("42", "", fakediscord.File{Name: "big.bin", Data: big})
	fd.SendDMFiles("42", "", fakediscord.File{Name: "liar.bin", Data: big, ToldSize: 10})
	ups := poll(t, d, 5)
	if len(ups) != 5 {
		t.Fatalf("updates %+v", ups)
	}
	ctx := t.Context()
	want := []struct {
		text, name, mime string
		size             int64
		voice            bool
		data             []byte
	}{
		{"see attached", "notes.txt", "text/plain; charset=utf-8", int64(len(doc)), false, doc},
		{"", "voice-message.ogg", "audio/ogg", int64(len(ogg)), true, ogg},
		{"what is this?", "cat.png", "image/png", int64(len(png)), false, png},
	}
	for i, w := range want {
		u := ups[i]
		if u.Text != w.text || len(u.Files) != 1 {
			t.Fatalf("update %d: %+v", i, u)
		}
		f := u.Files[0]
		if f.Name != w.name || f.MIME != w.mime || f.Size != w.size || f.Voice != w.voice {
			t.Errorf("update %d's file %+v", i, f)
		}
		got, err := f.Fetch(ctx, 1<<20)
		if err != nil || !bytes.Equal(got, w.data) {
			t.Errorf("update %d's file: %q, %v", i, got, err)
		}
	}
	if ups[2].Chat.ID != ChatID(ch, mention.ID) {
		t.Errorf("the mention's chat %+v", ups[2].Chat)
	}
	before := len(fd.Downloads())
	if _, err := ups[3].Files[0].Fetch(ctx, 1000); !errors.Is(err, attach.ErrTooLarge) {
		t.Errorf("a file Discord says is 5000 bytes, at most 1000: %v", err)
	}
	if n := len(fd.Downloads()); n != before {
		t.Errorf("the file over the limit was asked for: %d downloads, want %d", n, before)
	}
	if _, err := ups[4].Files[0].Fetch(ctx, 1000); !errors.Is(err, attach.ErrTooLarge) || ups[4].Files[0].Size != 10 {
		t.Errorf("a file told as 10 bytes that is 5000, at most 1000: %v", err)
	}
	for _, dl := range fd.Downloads() {
		if !dl.Served || dl.Authorization != "" {
			t.Errorf("download %+v: want served, with no Authorization (the CDN takes no token)", dl)
		}
	}
}

// TestFileURLs: a download goes only to Discord's CDN (https) or the
// configured API's host; an attachment elsewhere, or a redirect
// elsewhere, is refused without a request there; a failed download's
// error does not carry the signed URL.
func TestFileURLs(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte("not from Discord"))
	}))
	defer elsewhere.Close()
	redirector := httptest.NewServer(http.RedirectHandler(elsewhere.URL+"/x", http.StatusFound))
	defer redirector.Close()
	api, _ := url.Parse(redirector.URL + "/api/v10")
	d := &Discord{api: api}
	d.files = &http.Client{CheckRedirect: d.checkRedirect}

	for raw, ok := range map[string]bool{
		"https://cdn.discordapp.com/attachments/1/2/a.png?ex=1&is=2&hm=3": true,
		"https://media.discordapp.net/attachments/1/2/a.png":              true,
		"https://CDN.discordapp.com:443/attachments/1/2/a.png":            true,
		redirector.URL + "/attachments/1/2/a.png":                         true,
		"http://cdn.discordapp.com/attachments/1/2/a.png":                 false,
		"https://cdn.discordapp.com.example.org/attachments/1/2/a.png":    false,
		"https://user:pw@cdn.discordapp.com/attachments/1/2/a.png":        false,
		"https://cdn.discordapp.com:8443/attachments/1/2/a.png":           false,
		"https://discordapp.com/attachments/1/2/a.png":                    false,
		elsewhere.URL + "/attachments/1/2/a.png":                          false,
		"/attachments/1/2/a.png":                                          false,
		"":                                                                false,
	} {
		if err := d.fileURLAllowed(raw); (err == nil) != ok {
			t.Errorf("fileURLAllowed(%q) = %v, want allowed %v", raw, err, ok)
		}
	}

	msg := &discordgo.Message{Attachments: []*discordgo.MessageAttachment{
		{Filename: "a.txt", URL: elsewhere.URL + "/a.txt", Size: 16},
		{Filename: "b.txt", URL: redirector.URL + "/attachments/1/2/b.txt", Size: 16},
	}}
	for _, f := range d.filesOf(msg) {
		if _, err := f.Fetch(t.Context(), 1<<20); err == nil {
			t.Errorf("%s was fetched", f.Name)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("%d requests went elsewhere", n)
	}

	redirector.Close()
	gone := &discordgo.MessageAttachment{Filename: "c.txt", URL: redirector.URL + "/attachments/1/2/c.txt?ex=1&is=2&hm=secret-signature"}
	_, err := d.filesOf(&discordgo.Message{Attachments: []*discordgo.MessageAttachment{gone}})[0].Fetch(t.Context(), 1<<20)
	if err == nil || strings.Contains(err.Error(), "secret-signature") || !strings.Contains(err.Error(), "c.txt") {
		t.Errorf("a failed download: %v", err)
	}
}

// TestSendFile: a document goes as files[0] of a Create Message with the
// text as its content, whole after a rate limit; in a channel's chat it
// starts the thread as a reply would; one over Discord's limit is
// ErrUndeliverable.
func TestSendFile(t *testing.T) {
	t.Parallel()
	d, fd := connect(t)
	waitConnected(t, d, fd)
	dm := fd.DMChannel("42")
	report := []byte("# Report\n\nAll quiet.\n")
	fd.FailNext("createMessage", "ratelimited")
	id, err := d.SendFile(t.Context(), gateway.Outgoing{ChatID: dm, Text: "Here it is."}, gateway.OutFile{Name: "report.md", MIME: "text/markdown", Data: report})
	if err != nil {
		t.Fatal(err)
	}
	sent := fd.Sent()
	if len(sent) != 1 || sent[0].ID != id || sent[0].ChannelID != dm || sent[0].Content != `Here it is\.` || len(sent[0].Files) != 1 {
		t.Fatalf("sent %+v", sent)
	}
	if f := sent[0].Files[0]; f.Name != "report.md" || f.ContentType != "text/markdown" || !bytes.Equal(f.Data, report) {
		t.Errorf("uploaded %q %q %q", f.Name, f.ContentType, f.Data)
	}
	if sent[0].AllowedMentions != `{"parse":[],"replied_user":false}` {
		t.Errorf("allowed mentions %s", sent[0].AllowedMentions)
	}

	ch := fd.TextChannel()
	mention := fd.Mention("42", ch, "make a chart")
	if _, err := d.SendFile(t.Context(), gateway.Outgoing{ChatID: ChatID(ch, mention.ID)}, gateway.OutFile{Name: "../chart.csv", Data: []byte("a,b\n1,2\n")}); err != nil {
		t.Fatal(err)
	}
	last := fd.Sent()[1]
	if last.ChannelID != mention.ID || last.Content != "" || len(last.Files) != 1 || last.Files[0].Name != "chart.csv" ||
		last.Files[0].ContentType != "application/octet-stream" {
		t.Errorf("in the thread: %+v", last)
	}

	_, err = d.SendFile(t.Context(), gateway.Outgoing{ChatID: dm}, gateway.OutFile{Name: "huge.bin", Data: make([]byte, 11<<20)})
	if !errors.Is(err, gateway.ErrUndeliverable) {
		t.Errorf("an 11 MiB file: %v", err)
	}
}
