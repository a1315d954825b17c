package faketelegram

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/talaria-agent/talaria/internal/fakewire"
)

// maxGetFile is the largest file getFile lets a bot download (20 MB).
const maxGetFile = 20 << 20

// FileKind is how a file comes in a message.
type FileKind string

// The kinds of file a user sends.
const (
	PhotoFile    FileKind = "photo"
	VoiceFile    FileKind = "voice"
	DocumentFile FileKind = "document"
)

// Document is a file the bot sent (sendDocument).
type Document struct {
	ID      int64
	ChatID  int64
	Name    string
	Data    []byte
	ReplyTo int64
}

// stored is a file users sent, by file_id.
type stored struct {
	path string
	data []byte
}

// SendFile queues a message from user in a private chat with them
// carrying a file as the Bot API delivers it — a photo (in two sizes: a
// thumbnail and data), a voice memo (OGG), or a document named name —
// with caption, and returns its update id. The bot downloads it with
// getFile and the file endpoint.
func (s *Server) SendFile(user int64, kind FileKind, name, mime string, data []byte, caption string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	msgID := s.nextMsg
	s.nextMsg++
	put := func(data []byte, ext string) map[string]any {
		s.nextFile++
		id := fmt.Sprintf("file%d", s.nextFile)
		s.files[id] = stored{path: fmt.Sprintf("%ss/file_%d%s", kind, s.nextFile, ext), data: data}
		return map[string]any{"file_id": id, "file_unique_id": "u" + id, "file_size": len(data)}
	}
	msg := map[string]any{
		"message_id": msgID, "date": time.Now().Unix(),
		"from": map[string]any{"id": user, "is_bot": false, "first_name": fmt.Sprintf("user%d", user)},
		"chat": map[string]any{"id": user, "type": "private"},
	}
	if caption != "" {
		msg["caption"] = caption
	}
	switch kind {
	case PhotoFile:
		thumb := put([]byte("a thumbnail"), ".jpg")
		thumb["width"], thumb["height"] = 90, 60
		full := put(data, ".jpg")
		full["width"], full["height"] = 1280, 853
		msg["photo"] = []any{thumb, full}
	case VoiceFile:
		v := put(data, ".oga")
		v["duration"], v["mime_type"] = 3, "audio/ogg"
		msg["voice"] = v
	default:
		d := put(data, path.Ext(name))
		d["file_name"], d["mime_type"] = name, mime
		msg["document"] = d
	}
	return s.pushLocked(map[string]any{"message": msg})
}

// getFile answers getFile: the file's path on the file endpoint; a file
// over 20 MB is refused as the Bot API refuses it.
func (s *Server) getFile(w http.ResponseWriter, p map[string]string) {
	s.mu.Lock()
	f, ok := s.files[p["file_id"]]
	s.mu.Unlock()
	switch {
	case !ok:
		writeError(w, http.StatusBadRequest, "Bad Request: invalid file_id", 0)
	case len(f.data) > maxGetFile:
		writeError(w, http.StatusBadRequest, "Bad Request: file is too big", 0)
	default:
		writeResult(w, map[string]any{"file_id": p["file_id"], "file_unique_id": "u" + p["file_id"], "file_size": len(f.data), "file_path": f.path})
	}
}

// serveFile answers GET /file/bot<token>/<path>.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request, rest string) {
	token, p, _ := strings.Cut(rest, "/")
	if token != s.Token {
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	s.mu.Lock()
	var data []byte
	found := false
	for _, f := range s.files {
		if f.path == p {
			data, found = f.data, true
		}
	}
	s.downloads++
	s.mu.Unlock()
	if !found {
		http.Error(w, "Not Found", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	_, _ = w.Write(data)
}

// Downloads is how many times the file endpoint was asked for a file.
func (s *Server) Downloads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.downloads
}

// sendDocument answers sendDocument (multipart, the document as a file
// part named "document").
func (s *Server) sendDocument(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseMultipartForm(64 << 20); err != nil {
		writeError(w, http.StatusBadRequest, "Bad Request: "+err.Error(), 0)
		return
	}
	chat, err := strconv.ParseInt(r.FormValue("chat_id"), 10, 64)
	f, hdr, ferr := r.FormFile("document")
	if err != nil || ferr != nil {
		writeError(w, http.StatusBadRequest, "Bad Request: chat_id and document are required", 0)
		return
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		writeError(w, http.StatusBadRequest, "Bad Request: "+err.Error(), 0)
		return
	}
	d := Document{ChatID: chat, Name: hdr.Filename, Data: data}
	d.ReplyTo, _ = strconv.ParseInt(r.FormValue("reply_to_message_id"), 10, 64)
	s.mu.Lock()
	d.ID = s.nextMsg
	s.nextMsg++
	s.documents = append(s.documents, d)
	s.mu.Unlock()
	writeResult(w, map[string]any{"message_id": d.ID, "date": time.Now().Unix(),
		"chat":     map[string]any{"id": chat, "type": "private"},
		"document": map[string]any{"file_id": fmt.Sprintf("sent%d", d.ID), "file_unique_id": fmt.Sprintf("usent%d", d.ID), "file_name": d.Name, "file_size": len(data)}})
}

// Documents are the documents the bot sent, in order.
func (s *Server) Documents() []Document {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Document(nil), s.documents...)
}

// WaitDocuments waits until ok holds for the documents sent, or ctx ends.
func (s *Server) WaitDocuments(ctx context.Context, ok func([]Document) bool) ([]Document, error) {
	return fakewire.Wait(ctx, s.Documents, ok)
}
