package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/faketwilio"
)

// mms sends the number an MMS until the webhook takes it (200), as
// Twilio's retries would.
func mms(t *testing.T, tw *faketwilio.Server, from, body string, files ...faketwilio.File) string {
	t.Helper()
	sid, status, err := tw.MMS(from, body, files...)
	return untilTaken(t, tw, body, sid, status, err)
}

// TestSMSFiles: files both ways through the real binary and Twilio's
// media. A PDF by MMS lands in the chats' workspace and the model reads
// its path; a voice message goes to the transcription endpoint, its
// transcript is what the model reads and the sender gets it by text; a
// picture with a caption reaches a model that sees as an image part and
// its caption and path as text; a file the agent sends with send_message
// goes out as an MMS whose media Twilio fetches from the gateway's own
// webhook route, with the same bytes.
func TestSMSFiles(t *testing.T) {
	t.Parallel()
	model := filesModel("report.pdf")
	defer model.Close()
	tw := faketwilio.Start(smsNumber)
	t.Cleanup(tw.Close)
	u := newUser(t, model.URL())
	work := t.TempDir()
	writeConfig(filesConfig(model.URL(), work))(t, u)
	u.env["TWILIO_ACCOUNT_SID"] = tw.AccountSID
	u.env["TWILIO_AUTH_TOKEN"] = tw.AuthToken
	u.env["TWILIO_FROM_NUMBER"] = smsNumber
	u.env["TWILIO_API_URL"] = tw.URL()
	u.env["SMS_ALLOWED_USERS"] = smsAllowed
	port := freePort(t)
	hook := fmt.Sprintf("http://127.0.0.1:%d/webhooks/sms", port)
	tw.SetWebhook(hook)
	s, _ := u.apiServeOn(port)
	const within = time.Minute

	// A document.
	notes := []byte("%PDF-1.4\nmeeting notes: ship on friday\n%%EOF\n")
	mms(t, tw, smsAllowed, "", faketwilio.File{ContentType: "application/pdf", Data: notes})
	waitSMS(t, tw, smsAllowed, "got the notes", within)
	wantDocument(t, model, work, notes)

	// A voice message.
	voice := append([]byte("#!AMR\n"), bytes.Repeat([]byte{0x3c, 0x48, 0xf5, 0x1f}, 40)...)
	mms(t, tw, smsAllowed, "", faketwilio.File{ContentType: "audio/amr", Data: voice})
	waitSMS(t, tw, smsAllowed, "noted: plants", within)
	waitSMS(t, tw, smsAllowed, "🎤 "+filesTranscript, within)
	wantTranscribed(t, model, voice)

	// A picture with a caption.
	photo := redDot(t)
	mms(t, tw, smsAllowed, "what is this?", faketwilio.File{ContentType: "image/png", Data: photo})
	waitSMS(t, tw, smsAllowed, "a red dot", within)
	wantPicture(t, model, photo, "what is this?")

	// A file back, fetched by Twilio from the webhook's own route.
	report := []byte("%PDF-1.4\nthe quarterly report\n%%EOF\n")
	inWorkspace(t, work, "report.pdf", report)
	text(t, tw, smsAllowed, "send me the report")
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	fetched, err := tw.WaitFetched(ctx, func(f []faketwilio.Fetched) bool { return len(f) > 0 })
	if err != nil {
		t.Fatalf("Twilio fetched no media: %v", err)
	}
	f := fetched[0]
	if f.Err != "" || f.ContentType != "application/pdf" || f.Name != "report.pdf" || !bytes.Equal(f.Data, report) || !strings.HasPrefix(f.URL, hook+"/media/") {
		t.Fatalf("Twilio fetched %+v", f)
	}
	sent := waitOne(t, "the MMS to "+smsAllowed, tw.Sent, func(m faketwilio.Message) bool { return m.Sid == f.MessageSid }, within)
	if sent.To != smsAllowed || len(sent.MediaURLs) != 1 {
		t.Errorf("the MMS: %+v", sent)
	}
	waitSMS(t, tw, smsAllowed, "sent it", within)
	// The link is the gateway's, for the file it sent and nothing else.
	if resp, err := http.Get(strings.Replace(f.URL, "report.pdf", "secret.pdf", 1)); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("an altered link: %v %v, want 403", resp, err)
	} else {
		resp.Body.Close()
	}
	if log := serveOutput(s) + readLogIfAny(u, "serve"); strings.Contains(log, tw.AuthToken) || strings.Contains(log, "ship on friday") {
		t.Errorf("the log holds the auth token or a file's contents")
	}
}
