package fakeslack

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/talaria-agent/talaria/internal/fakewire"
)

// maxFileSize is the largest file Slack keeps (1 GB).
const maxFileSize = 1 << 30

// File is a file a user sends with a message (SendDMFiles, MentionFiles).
type File struct {
	Name, MIME string
	Data       []byte
	// Voice makes it an audio clip recorded in Slack's composer (subtype
	// slack_audio, media_display_type audio).
	Voice bool
	// Size is the size the event tells (len(Data) when 0): a test makes an
	// event understate a file.
	Size int64
	// ExternalURL makes it a file kept outside Slack (Google Drive and the
	// like): the event's url_private is this URL, and the fake serves no
	// bytes for it.
	ExternalURL string
	// InfoOnly makes the event carry only the file's id and file_access
	// "check_file_info", as in a Slack Connect conversation: files.info
	// tells the rest.
	InfoOnly bool
}

// Upload is a file the bot uploaded and shared
// (files.completeUploadExternal).
type Upload struct {
	ID, Channel, ThreadTS, Name, Title, Comment string
	// MIME is the type Slack gives it, by its name or else its content.
	MIME string
	Data []byte
}

// Fetch is one request of a file's private URL.
type Fetch struct {
	FileID string
	// Authorized: it carried the bot token as a Bearer header; one that
	// did not is sent to the workspace's sign-in page, as Slack does.
	Authorized bool
}

// storedFile is a file the fake keeps: one a user sent, or one the bot
// uploads.
type storedFile struct {
	id, name, title, mime, user string
	data                        []byte
	size                        int64 // what events tell
	voice, infoOnly             bool
	external                    string
	created                     int64
	// An upload: the length files.getUploadURLExternal was told, and
	// whether its bytes arrived.
	length   int64
	uploaded bool
}

// SendDMFiles delivers a message with files from user in the DM channel
// (a message event of subtype file_share, text its caption), and returns
// its ts.
func (s *Server) SendDMFiles(user, channel, text string, files ...File) string {
	return s.post(user, channel, "im", text, "", false, files)
}

// MentionFiles delivers a message with files from user in a channel that
// mentions the bot (an app_mention event carrying the files), in a thread
// when threadTS is set; it returns its ts.
func (s *Server) MentionFiles(user, channel, text, threadTS string, files ...File) string {
	return s.post(user, channel, "channel", "<@"+BotUserID+"> "+text, threadTS, true, files)
}

// Uploads are the files the bot uploaded and shared, in order.
func (s *Server) Uploads() []Upload {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Upload(nil), s.uploads...)
}

// WaitUploads waits until ok holds for the uploads, or ctx ends.
func (s *Server) WaitUploads(ctx context.Context, ok func([]Upload) bool) ([]Upload, error) {
	return fakewire.Wait(ctx, s.Uploads, ok)
}

// Fetches are the requests of files' private URLs, in order.
func (s *Server) Fetches() []Fetch {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Fetch(nil), s.fetches...)
}

// storeFilesLocked keeps files user sends and returns their objects as a
// message event carries them.
func (s *Server) storeFilesLocked(user string, files []File) []any {
	var out []any
	for _, f := range files {
		sf := &storedFile{id: s.idLocked("F"), name: f.Name, title: f.Name, mime: f.MIME, user: user, data: f.Data,
			size: f.Size, voice: f.Voice, infoOnly: f.InfoOnly, external: f.ExternalURL, created: time.Now().Unix()}
		if sf.size == 0 {
			sf.size = int64(len(f.Data))
		}
		s.files[sf.id] = sf
		out = append(out, s.fileObjectLocked(sf, false))
	}
	return out
}

// fileObjectLocked is f as Slack describes it: in full (files.info), or
// as an event carries it (only its id for an InfoOnly file).
func (s *Server) fileObjectLocked(f *storedFile, full bool) map[string]any {
	if f.infoOnly && !full {
		return map[string]any{"id": f.id, "mode": "file_access", "file_access": "check_file_info", "created": 0, "timestamp": 0, "user": f.user}
	}
	ext := strings.TrimPrefix(strings.ToLower(path.Ext(f.name)), ".")
	if ext == "" {
		ext = "binary"
	}
	base := s.srv.URL + "/files-pri/" + TeamID + "-" + f.id + "/"
	name := url.PathEscape(f.name)
	obj := map[string]any{"id": f.id, "created": f.created, "timestamp": f.created, "name": f.name, "title": f.title,
		"mimetype": f.mime, "filetype": ext, "pretty_type": strings.ToUpper(ext), "user": f.user, "user_team": TeamID,
		"editable": false, "size": f.size, "mode": "hosted", "is_external": false, "external_type": "", "is_public": false,
		"public_url_shared": false, "display_as_bot": false, "username": "", "file_access": "visible",
		"url_private": base + name, "url_private_download": base + "download/" + name,
		"permalink":        "https://fake.slack.com/files/" + f.user + "/" + f.id + "/" + name,
		"permalink_public": "https://slack-files.com/" + TeamID + "-" + f.id + "-0000000000",
		"is_starred":       false, "has_rich_preview": false}
	if f.voice {
		obj["subtype"], obj["media_display_type"], obj["duration_ms"] = "slack_audio", "audio", 1000
		obj["transcription"] = map[string]any{"status": "processing"}
	}
	if f.external != "" {
		obj["mode"], obj["is_external"], obj["external_type"] = "external", true, "gdrive"
		obj["url_private"], obj["external_url"] = f.external, f.external
		delete(obj, "url_private_download")
	}
	return obj
}

// serveFile serves a file's private URL (/files-pri/<team>-<id>/[download/]<name>)
// to a request with the bot token; one without is redirected to the
// sign-in page, as Slack redirects it.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, "/files-pri/")
	key, _, _ := strings.Cut(rest, "/")
	id := strings.TrimPrefix(key, TeamID+"-")
	authorized := r.Header.Get("Authorization") == "Bearer "+s.BotToken
	s.mu.Lock()
	f := s.files[id]
	s.fetches = append(s.fetches, Fetch{FileID: id, Authorized: authorized})
	s.mu.Unlock()
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if !authorized {
		http.Redirect(w, r, s.srv.URL+"/?redir="+url.QueryEscape(r.URL.Path), http.StatusFound)
		return
	}
	if f == nil || f.external != "" || (f.length > 0 && !f.uploaded) {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", f.mime)
	w.Header().Set("Content-Length", strconv.Itoa(len(f.data)))
	w.Header().Set("Content-Disposition", "attachment; filename*=UTF-8''"+url.PathEscape(f.name))
	_, _ = w.Write(f.data)
}

// getUploadURLExternal answers files.getUploadURLExternal: a file id and
// the URL its bytes are posted to.
func (s *Server) getUploadURLExternal(w http.ResponseWriter, p map[string]string) {
	length, err := strconv.ParseInt(p["length"], 10, 64)
	if p["filename"] == "" || err != nil || length <= 0 {
		writeError(w, "invalid_arguments")
		return
	}
	if length > maxFileSize {
		writeError(w, "file_too_large")
		return
	}
	s.mu.Lock()
	f := &storedFile{id: s.idLocked("F"), name: p["filename"], title: p["filename"], user: BotUserID, length: length, created: time.Now().Unix()}
	s.files[f.id] = f
	key := s.idLocked("up")
	s.uploadURLs[key] = f.id
	s.mu.Unlock()
	writeOK(w, map[string]any{"upload_url": s.srv.URL + "/upload/v1/" + key, "file_id": f.id})
}

// serveUpload takes a file's bytes at its upload URL: the body, or the
// first file of a multipart form; exactly the length it was told.
func (s *Server) serveUpload(w http.ResponseWriter, r *http.Request) {
	key := strings.TrimPrefix(r.URL.Path, "/upload/v1/")
	s.mu.Lock()
	f := s.files[s.uploadURLs[key]]
	s.mu.Unlock()
	if r.Method != http.MethodPost || f == nil {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	var body io.Reader = r.Body
	if ct, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == "multipart/form-data" {
		mr := multipart.NewReader(r.Body, params["boundary"])
		for {
			part, err := mr.NextPart()
			if err != nil {
				http.Error(w, "no file in the form", http.StatusBadRequest)
				return
			}
			if part.FileName() != "" {
				body = part
				break
			}
		}
	}
	data, err := io.ReadAll(io.LimitReader(body, f.length+1))
	if err != nil || int64(len(data)) != f.length {
		http.Error(w, fmt.Sprintf("the upload is not the %d bytes told", f.length), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	f.data, f.size, f.uploaded = data, f.length, true
	f.mime = uploadMIME(f.name, data)
	delete(s.uploadURLs, key)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain")
	_, _ = fmt.Fprintf(w, "OK - %d", len(data))
}

// uploadMIME is the type Slack gives an uploaded file: by its name's
// extension, or else its content. Pure.
func uploadMIME(name string, data []byte) string {
	t := mime.TypeByExtension(path.Ext(name))
	if t == "" {
		t = http.DetectContentType(data)
	}
	t, _, _ = strings.Cut(t, ";")
	return t
}

// completeUploadExternal answers files.completeUploadExternal: the files
// uploaded are shared into the channel (in its thread), with the comment.
func (s *Server) completeUploadExternal(w http.ResponseWriter, p map[string]string) {
	var sums []struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	}
	if err := json.Unmarshal([]byte(p["files"]), &sums); err != nil || len(sums) == 0 {
		writeError(w, "invalid_arguments")
		return
	}
	channel := p["channel_id"]
	if channel == "" {
		channel, _, _ = strings.Cut(p["channels"], ",")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if p["thread_ts"] != "" && (channel == "" || !s.hasTSLocked(channel, p["thread_ts"])) {
		writeError(w, "invalid_thread_ts")
		return
	}
	var done []any
	var objs []any
	for _, sum := range sums {
		f := s.files[sum.ID]
		if f == nil || !f.uploaded {
			writeError(w, "file_not_found")
			return
		}
		if sum.Title != "" {
			f.title = sum.Title
		}
		done = append(done, map[string]any{"id": f.id, "title": f.title})
		objs = append(objs, s.fileObjectLocked(f, true))
		s.uploads = append(s.uploads, Upload{ID: f.id, Channel: channel, ThreadTS: p["thread_ts"], Name: f.name, Title: f.title,
			Comment: p["initial_comment"], MIME: f.mime, Data: append([]byte(nil), f.data...)})
	}
	// The file's message in a DM comes back to the app as the bot's own.
	if strings.HasPrefix(channel, "D") {
		ts := s.tsLocked()
		ev := map[string]any{"type": "message", "subtype": "file_share", "user": BotUserID, "bot_id": BotID, "text": p["initial_comment"],
			"ts": ts, "channel": channel, "channel_type": "im", "event_ts": ts, "files": objs, "upload": false, "display_as_bot": false}
		if p["thread_ts"] != "" {
			ev["thread_ts"] = p["thread_ts"]
		}
		s.pushEventLocked(ev)
	}
	writeOK(w, map[string]any{"files": done})
}

// filesInfo answers files.info with the file in full.
func (s *Server) filesInfo(w http.ResponseWriter, p map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.files[p["file"]]
	if f == nil || (f.length > 0 && !f.uploaded) {
		writeError(w, "file_not_found")
		return
	}
	writeOK(w, map[string]any{"file": s.fileObjectLocked(f, true), "comments": []any{},
		"paging": map[string]any{"count": 100, "total": 0, "page": 1, "pages": 0}})
}
