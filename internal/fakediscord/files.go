package fakediscord

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Discord's limits on files.
const (
	// uploadLimit is the largest file a bot uploads where the server has
	// no boost (and in DMs): 10 MiB.
	uploadLimit = 10 << 20
	// maxRequestBody bounds a request the fake reads.
	maxRequestBody = 2*uploadLimit + 1<<20
	// signedFor is how long an attachment's signed URL is good.
	signedFor = 24 * time.Hour
)

// flagVoiceMessage is IS_VOICE_MESSAGE: the message is a voice message,
// its one attachment the recording.
const flagVoiceMessage = 1 << 13

// codeEntityTooLarge is Discord's code for an upload over the limit.
const codeEntityTooLarge = 40005

// File is a file attached to a message: one a user sends (SendDMFiles,
// MentionFiles, SendVoice), or one the bot uploaded (a Create Message
// with files[n]).
type File struct {
	Name, ContentType string
	Data              []byte
	// Seconds is a voice message's duration (duration_secs).
	Seconds float64
	// ToldSize is the size the attachment object tells (0: the real
	// one), for a test of a size that is not the truth.
	ToldSize int64
	// ID and URL are the attachment's id and signed CDN URL, set by the
	// fake.
	ID, URL string
}

// Download is one request of the CDN for an attachment.
type Download struct {
	// AttachmentID is the file asked for ("" when the path names none).
	AttachmentID string
	// Served: the signature was good and the file was sent.
	Served bool
	// Authorization is the request's Authorization header: the CDN
	// takes none, so a client that sends one shows its token around.
	Authorization string
}

// SendDMFiles is user's message with files to the bot in their DM (text
// may be ""); it returns the message.
func (s *Server) SendDMFiles(user, text string, files ...File) Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.postFilesLocked(user, s.dmLocked(user), text, false, 0, files)
}

// MentionFiles is user's message with files in a guild channel (or
// thread) that mentions the bot.
func (s *Server) MentionFiles(user, channelID, text string, files ...File) Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.postFilesLocked(user, channelID, "<@"+BotID+"> "+text, true, 0, files)
}

// SendVoice is user's voice message to the bot in their DM, as Discord's
// apps record one: no content, the IS_VOICE_MESSAGE flag, and one
// attachment voice-message.ogg (audio/ogg) with its duration and
// waveform.
func (s *Server) SendVoice(user string, ogg []byte, seconds float64) Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := File{Name: "voice-message.ogg", ContentType: "audio/ogg", Data: ogg, Seconds: seconds}
	return s.postFilesLocked(user, s.dmLocked(user), "", false, flagVoiceMessage, []File{f})
}

func (s *Server) postFilesLocked(user, channelID, content string, mention bool, flags int, files []File) Message {
	m := &Message{ID: s.snowflakeLocked(), ChannelID: channelID, Author: user, Content: content, Flags: flags}
	m.Files = s.attachLocked(channelID, files)
	s.messages[m.ID] = m
	m.payload = s.messageJSONLocked(m, mention)
	s.dispatchLocked("MESSAGE_CREATE", m.payload)
	return *m
}

// attachLocked gives each file an attachment id and a signed CDN URL,
// and keeps it for the CDN.
func (s *Server) attachLocked(channelID string, files []File) []File {
	out := make([]File, len(files))
	for i, f := range files {
		f.Data = append([]byte(nil), f.Data...)
		f.ID = s.snowflakeLocked()
		f.URL = s.srv.URL + s.signLocked(fmt.Sprintf("/attachments/%s/%s/%s", channelID, f.ID, url.PathEscape(f.Name)), time.Now())
		s.files[f.ID] = f
		out[i] = f
	}
	return out
}

// signLocked adds to a CDN path what signs it as Discord does: ex (when
// it expires) and is (when it was issued), hex Unix times, and hm, their
// HMAC with the path.
func (s *Server) signLocked(path string, now time.Time) string {
	ex := strconv.FormatInt(now.Add(signedFor).Unix(), 16)
	is := strconv.FormatInt(now.Unix(), 16)
	return path + "?ex=" + ex + "&is=" + is + "&hm=" + s.mac(path, ex, is) + "&"
}

func (s *Server) mac(path, ex, is string) string {
	h := hmac.New(sha256.New, s.cdnKey)
	h.Write([]byte(path + "\n" + ex + "\n" + is))
	return hex.EncodeToString(h.Sum(nil))
}

// attachmentsJSON are files as Discord's attachment objects.
func attachmentsJSON(files []File) []any {
	out := []any{}
	for _, f := range files {
		size := int64(len(f.Data))
		if f.ToldSize != 0 {
			size = f.ToldSize
		}
		a := map[string]any{"id": f.ID, "filename": f.Name, "size": size, "url": f.URL, "proxy_url": f.URL}
		if f.ContentType != "" {
			a["content_type"] = f.ContentType
		}
		if f.Seconds > 0 {
			a["duration_secs"] = f.Seconds
			a["waveform"] = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0x40}, 32))
		}
		out = append(out, a)
	}
	return out
}

// serveCDN serves an attachment at its signed URL, as Discord's CDN does:
// without a token; an unsigned, tampered or expired URL is 404 "This
// content is no longer available."
func (s *Server) serveCDN(w http.ResponseWriter, r *http.Request) {
	p := strings.Split(strings.TrimPrefix(r.URL.EscapedPath(), "/attachments/"), "/")
	d := Download{Authorization: r.Header.Get("Authorization")}
	if len(p) == 3 {
		d.AttachmentID = p[1]
	}
	s.mu.Lock()
	f, ok := s.files[d.AttachmentID]
	q := r.URL.Query()
	ex, err := strconv.ParseInt(q.Get("ex"), 16, 64)
	good := ok && r.Method == http.MethodGet && err == nil && time.Now().Unix() < ex &&
		hmac.Equal([]byte(q.Get("hm")), []byte(s.mac(r.URL.EscapedPath(), q.Get("ex"), q.Get("is"))))
	d.Served = good
	s.downloads = append(s.downloads, d)
	s.mu.Unlock()
	if !good {
		http.Error(w, "This content is no longer available.", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", f.ContentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(f.Data)))
	_, _ = w.Write(f.Data)
}

// Downloads are the CDN's requests, in order.
func (s *Server) Downloads() []Download {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Download(nil), s.downloads...)
}

// readBody reads a REST request's JSON body: the body itself, or a
// multipart form's payload_json with its files[n]. tooLarge: a file over
// Discord's limit, or a body larger than any it takes.
func readBody(r *http.Request) (raw []byte, files []File, tooLarge bool, err error) {
	raw, err = io.ReadAll(io.LimitReader(r.Body, maxRequestBody+1))
	if err != nil || len(raw) > maxRequestBody {
		return nil, nil, len(raw) > maxRequestBody, err
	}
	mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "multipart/form-data" {
		return raw, nil, false, nil
	}
	mr := multipart.NewReader(bytes.NewReader(raw), params["boundary"])
	var payload []byte
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, false, err
		}
		data, err := io.ReadAll(part)
		if err != nil {
			return nil, nil, false, err
		}
		switch name := part.FormName(); {
		case name == "payload_json":
			payload = data
		case strings.HasPrefix(name, "files[") && strings.HasSuffix(name, "]"):
			if len(data) > uploadLimit {
				return nil, nil, true, nil
			}
			files = append(files, File{Name: part.FileName(), ContentType: part.Header.Get("Content-Type"), Data: data})
		}
	}
	return payload, files, false, nil
}
