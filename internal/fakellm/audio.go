package fakellm

import (
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
)

// This file makes the fake a speech-to-text server too: POST
// /v1/audio/transcriptions as OpenAI (and whisper.cpp's server, Groq ...)
// serve it: a multipart form with the audio as "file" and the model as
// "model"; the answer is {"text": ...} (response_format json, the
// default), or the bare text (text).

// Transcriber is what the fake hears in an audio file: the transcript of
// data, sent as a file named name.
type Transcriber func(name string, data []byte) string

// WithTranscriber sets what the transcription endpoint answers. Without
// it, a file's transcript is "transcript of <name> (<n> bytes)".
func WithTranscriber(t Transcriber) Option {
	return optionFunc(func(c *config) { c.extra.transcribe = t })
}

// Transcription is one request of the transcription endpoint, as the fake
// received it.
type Transcription struct {
	Model, Name string
	Data        []byte
}

// transcriptions are the transcription requests received.
type transcriptions struct {
	mu  sync.Mutex
	got []Transcription
}

// Transcriptions are the transcription requests received, in order.
func (s *Server) Transcriptions() []Transcription {
	s.extra.heard.mu.Lock()
	defer s.extra.heard.mu.Unlock()
	return append([]Transcription(nil), s.extra.heard.got...)
}

// handleTranscription answers POST /v1/audio/transcriptions.
func (s *Server) handleTranscription(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeMethodNotAllowed(w, r, http.MethodPost)
		return
	}
	if !s.authorized(r) {
		writeAPIError(w, errUnauthorized)
		return
	}
	bad := func(msg string) {
		writeAPIError(w, apiError{status: http.StatusBadRequest, message: "fakellm: " + msg, typ: "invalid_request_error"})
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "multipart/form-data" {
		bad("the body must be multipart/form-data")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
	if err := r.ParseMultipartForm(maxBodyBytes); err != nil {
		bad("read the form: " + err.Error())
		return
	}
	model := r.FormValue("model")
	f, hdr, err := r.FormFile("file")
	if err != nil || model == "" {
		bad(`the form needs "file" and "model"`)
		return
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		bad("read the file: " + err.Error())
		return
	}
	s.extra.heard.mu.Lock()
	s.extra.heard.got = append(s.extra.heard.got, Transcription{Model: model, Name: hdr.Filename, Data: data})
	s.extra.heard.mu.Unlock()
	text := fmt.Sprintf("transcript of %s (%d bytes)", hdr.Filename, len(data))
	if s.extra.transcribe != nil {
		text = s.extra.transcribe(hdr.Filename, data)
	}
	switch format := r.FormValue("response_format"); format {
	case "", "json", "verbose_json":
		writeJSON(w, http.StatusOK, map[string]any{"text": text})
	case "text":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, text)
	default:
		bad(fmt.Sprintf("response_format %q is not one the fake serves", strings.TrimSpace(format)))
	}
}
