package sms

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/attach"
	"github.com/talaria-agent/talaria/internal/faketwilio"
	"github.com/talaria-agent/talaria/internal/gateway"
	"github.com/talaria-agent/talaria/models"
)

const (
	number = "+15550000001"
	phone  = "+15550000042"
)

// hooked is a Twilio number on the fake whose webhook (and everything
// under it) is answered by the adapter's Hook, as the gateway's webhook
// route answers it: the updates it read, by id.
type hooked struct {
	s       *SMS
	tw      *faketwilio.Server
	hook    string
	mu      sync.Mutex
	updates map[string]gateway.Update
}

func startHooked(t *testing.T) *hooked {
	t.Helper()
	tw := faketwilio.Start(number)
	t.Cleanup(tw.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := New(ctx, Options{APIURL: tw.URL(), AccountSID: tw.AccountSID, AuthToken: tw.AuthToken, From: number})
	if err != nil {
		t.Fatal(err)
	}
	h := &hooked{s: s, tw: tw, updates: map[string]gateway.Update{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got, err := s.Hook(r, body)
		switch {
		case errors.Is(err, gateway.ErrForged):
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		case err != nil:
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		h.mu.Lock()
		for _, u := range got.Updates {
			h.updates[u.ID] = u
		}
		h.mu.Unlock()
		for k, v := range got.Header {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Type", got.ContentType)
		_, _ = w.Write(got.Body)
	}))
	t.Cleanup(srv.Close)
	h.hook = srv.URL + "/webhooks/sms"
	tw.SetWebhook(h.hook)
	return h
}

func (h *hooked) update(t *testing.T, sid string, status int, err error) gateway.Update {
	t.Helper()
	if err != nil || status != http.StatusOK {
		t.Fatalf("the webhook: %d %v", status, err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	u, ok := h.updates[sid]
	if !ok {
		t.Fatalf("no update %s", sid)
	}
	return u
}

// TestFilesIn: an MMS's media are files fetched from Twilio's API with the
// account's credentials; one over max is refused by its size before its
// bytes are read; a media URL anywhere but the account's media on
// Twilio's API is never fetched.
func TestFilesIn(t *testing.T) {
	t.Parallel()
	h := startHooked(t)
	ctx := context.Background()

	picture, memo := bytes.Repeat([]byte{0x89}, 4096), []byte("#!AMR\n and the rest")
	sid, status, err := h.tw.MMS(phone, "look at this", faketwilio.File{ContentType: "image/png", Data: picture},
		faketwilio.File{ContentType: "audio/amr", Data: memo})
	u := h.update(t, sid, status, err)
	if u.Text != "look at this" || len(u.Files) != 2 || u.Files[0].MIME != "image/png" || u.Files[0].Voice || !u.Files[1].Voice {
		t.Fatalf("the MMS became %+v", u)
	}
	media := h.tw.Media(sid)
	if got, err := u.Files[1].Fetch(ctx, 1<<20); err != nil || !bytes.Equal(got, memo) {
		t.Errorf("fetch the memo: %q %v", got, err)
	}
	if n := h.tw.Downloads(media[1]); n != 1 {
		t.Errorf("the memo was downloaded %d times", n)
	}
	if _, err := u.Files[0].Fetch(ctx, 1000); !errors.Is(err, attach.ErrTooLarge) || !strings.Contains(err.Error(), "4.1 KB") {
		t.Errorf("a picture over max: %v, want ErrTooLarge by its size", err)
	}
	// Without the account's credentials the media is not served.
	mu := h.tw.URL() + "/2010-04-01/Accounts/" + h.tw.AccountSID + "/Messages/" + sid + "/Media/" + media[0]
	if resp, err := http.Get(mu); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the media without credentials: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}

	var hits atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer elsewhere.Close()
	for _, bad := range []string{
		elsewhere.URL + "/2010-04-01/Accounts/" + h.tw.AccountSID + "/Messages/MM1/Media/ME1",
		h.tw.URL() + "/2010-04-01/Accounts/ACother/Messages/MM1/Media/ME1",
		h.tw.URL() + "/2010-04-01/Accounts/" + h.tw.AccountSID + "/Messages/MM1/Media/ME1/../../../../x",
	} {
		form := url.Values{"MessageSid": {"MM" + bad[len(bad)-8:]}, "AccountSid": {h.tw.AccountSID}, "From": {phone}, "To": {number},
			"NumMedia": {"1"}, "MediaUrl0": {bad}, "MediaContentType0": {"image/png"}}
		r := httptest.NewRequest(http.MethodPost, h.hook, strings.NewReader(form.Encode()))
		r.Header.Set("X-Twilio-Signature", faketwilio.Signature(h.tw.AuthToken, h.hook, form))
		got, err := h.s.Hook(r, []byte(form.Encode()))
		if err != nil || len(got.Updates) != 1 || len(got.Updates[0].Files) != 1 {
			t.Fatalf("%s: %+v %v", bad, got, err)
		}
		if _, err := got.Updates[0].Files[0].Fetch(ctx, 1<<20); err == nil || !strings.Contains(err.Error(), "not fetched") {
			t.Errorf("%s: %v", bad, err)
		}
	}
	if hits.Load() != 0 {
		t.Errorf("another host was asked %d times", hits.Load())
	}
}

// TestSendFile: a file goes out as an MMS whose media URL is the
// webhook's own, learnt from Twilio's signed request; Twilio fetches it
// and gets the bytes, type and name; the link, altered or expired, serves
// nothing; a type Twilio does not take, a file over 5 MB, or no known
// address is undeliverable.
func TestSendFile(t *testing.T) {
	t.Parallel()
	h := startHooked(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pdf := []byte("%PDF-1.4\nthe report\n")
	out := gateway.OutFile{Name: "report.pdf", MIME: "application/pdf", Data: pdf}
	if _, err := h.s.SendFile(ctx, gateway.Outgoing{ChatID: phone}, out); !errors.Is(err, gateway.ErrUndeliverable) || !strings.Contains(err.Error(), "webhook_url") {
		t.Errorf("with no address known: %v", err)
	}
	sid, status, err := h.tw.Text(phone, "hi")
	h.update(t, sid, status, err)

	id, err := h.s.SendFile(ctx, gateway.Outgoing{ChatID: phone, Text: "the **report**"}, out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := h.tw.WaitFetched(ctx, func(f []faketwilio.Fetched) bool { return len(f) == 1 })
	if err != nil {
		t.Fatal(err)
	}
	f := got[0]
	if f.Err != "" || f.MessageSid != id || f.ContentType != "application/pdf" || f.Name != "report.pdf" || !bytes.Equal(f.Data, pdf) {
		t.Fatalf("Twilio fetched %+v", f)
	}
	sent := h.tw.Sent()
	if len(sent) != 1 || sent[0].Body != "the report" || !strings.HasPrefix(f.URL, h.hook+"/media/") {
		t.Fatalf("sent %+v, media at %s", sent, f.URL)
	}

	link, _ := url.Parse(f.URL)
	parts := strings.Split(link.Path, "/")
	sig := parts[len(parts)-2]
	for _, bad := range []string{
		strings.Replace(f.URL, sig, strings.Repeat("A", len(sig)), 1),
		strings.Replace(f.URL, "report.pdf", "other.pdf", 1),
		h.hook + "/media/../../etc/passwd",
	} {
		resp, err := http.Get(bad)
		if err != nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: %v %v, want 403", bad, resp, err)
			continue
		}
		resp.Body.Close()
	}
	h.s.now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	if _, err := h.s.Hook(httptest.NewRequest(http.MethodGet, link.Path, nil), nil); !errors.Is(err, gateway.ErrForged) {
		t.Errorf("an expired link: %v", err)
	}
	h.s.now = nil

	for _, o := range []gateway.OutFile{
		{Name: "log.txt", MIME: "text/plain", Data: bytes.Repeat([]byte("x"), Limit)}, // with its name, over one text
		{Name: "huge.txt", MIME: "text/plain", Data: bytes.Repeat([]byte("x"), 1<<20)},
		{Name: "notes.txt", MIME: "text/plain", Data: []byte("not \xff UTF-8")},
		{Name: "big.pdf", MIME: "application/pdf", Data: make([]byte, maxMMS+1)},
		{Name: "tool.bin", MIME: "application/octet-stream", Data: []byte("x")},
	} {
		if _, err := h.s.SendFile(ctx, gateway.Outgoing{ChatID: phone}, o); !errors.Is(err, gateway.ErrUndeliverable) {
			t.Errorf("%s: %v, want undeliverable", o.Name, err)
		}
	}
	if n := len(h.tw.Sent()); n != 1 {
		t.Errorf("%d messages sent, want 1", n)
	}

	// A short text file goes as text, after the message's own text.
	id, err = h.s.SendFile(ctx, gateway.Outgoing{ChatID: phone, Text: "the notes"}, gateway.OutFile{Name: "notes.txt", MIME: "text/plain; charset=utf-8", Data: []byte("# plan\n- ship *on* friday\n")})
	if err != nil {
		t.Fatal(err)
	}
	sent = h.tw.Sent()
	if len(sent) != 2 || sent[1].Sid != id || sent[1].Body != "the notes\n\nnotes.txt:\n\n# plan\n- ship *on* friday" || len(sent[1].MediaURLs) != 0 {
		t.Fatalf("sent %+v, want the file's text as a message", sent)
	}
}

func TestLinkName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"report.pdf":                     "report.pdf",
		"my report.pdf":                  "my_report.pdf",
		`a/b\c"d%e.csv`:                  "a_b_c_d_e.csv",
		"":                               "file",
		"..":                             "file",
		strings.Repeat("x", 60) + ".pdf": strings.Repeat("x", 36) + ".pdf",
	} {
		if got := linkName(in); got != want {
			t.Errorf("linkName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestStoredFileServedByAnyProcess: the link of a stored file names its
// stored bytes, so another process of the installation (or this one after
// a restart) serves it from the store; without the store it serves
// nothing.
func TestStoredFileServedByAnyProcess(t *testing.T) {
	t.Parallel()
	h := startHooked(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := models.Open(ctx, filepath.Join(t.TempDir(), "talaria.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	read := func(ctx context.Context, id string) ([]byte, string, error) {
		a, err := st.Attachment(ctx, id)
		if err != nil {
			return nil, "", err
		}
		return a.Data, a.MIME, nil
	}
	pdf := []byte("%PDF-1.4\nstored\n")
	id, err := st.PutAttachment(ctx, "application/pdf", pdf)
	if err != nil {
		t.Fatal(err)
	}
	h.s.ReadAttachmentsWith(read)
	sid, status, err := h.tw.Text(phone, "hi")
	h.update(t, sid, status, err)
	if _, err := h.s.SendFile(ctx, gateway.Outgoing{ChatID: phone}, gateway.OutFile{ID: id, Name: "r.pdf", MIME: "application/pdf", Data: pdf}); err != nil {
		t.Fatal(err)
	}
	got, err := h.tw.WaitFetched(ctx, func(f []faketwilio.Fetched) bool { return len(f) == 1 })
	if err != nil || !bytes.Equal(got[0].Data, pdf) {
		t.Fatalf("Twilio fetched %+v, %v", got, err)
	}
	link, _ := url.Parse(got[0].URL)
	if !strings.Contains(link.Path, "/"+id+"/") {
		t.Fatalf("the link %s does not name the stored file", link.Path)
	}

	other, err := New(ctx, Options{APIURL: h.tw.URL(), AccountSID: h.tw.AccountSID, AuthToken: h.tw.AuthToken, From: number})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Hook(httptest.NewRequest(http.MethodGet, link.Path, nil), nil); err == nil {
		t.Fatal("a process without the store served a file it does not hold")
	}
	other.ReadAttachmentsWith(read)
	res, err := other.Hook(httptest.NewRequest(http.MethodGet, link.Path, nil), nil)
	if err != nil || !bytes.Equal(res.Body, pdf) || res.ContentType != "application/pdf" {
		t.Fatalf("another process served %q (%s), %v", res.Body, res.ContentType, err)
	}
}
