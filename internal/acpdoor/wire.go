package acpdoor

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"
)

// maxLine is the longest message the agent reads: the SDK's own limit, past
// which its reader would close the connection.
const maxLine = 10 << 20

// lockedWriter makes each Write whole: the SDK writes one message per Write
// under its own lock, and the guard's error replies share the stream. It
// also runs what waits for a response to be out (afterResponse).
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
	// after are run, each once, when the response that gives the editor
	// their session's id has been written.
	after map[string]func()
}

// afterResponse runs f once the response carrying sessionID is written:
// a notification about a new session must follow the response that tells
// the editor of it. f runs under the SDK's write lock, so it must not
// write itself; it starts what writes.
func (l *lockedWriter) afterResponse(sessionID string, f func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.after == nil {
		l.after = map[string]func(){}
	}
	l.after[sessionID] = f
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	n, err := l.w.Write(p)
	var f func()
	if len(l.after) > 0 {
		if id := responseSession(p); id != "" {
			f = l.after[id]
			delete(l.after, id)
			if err != nil {
				f = nil // the editor never learnt of the session
			}
		}
	}
	l.mu.Unlock()
	if f != nil {
		f()
	}
	return n, err
}

// responseSession is the session id a response's result carries ("" for
// any other message). Pure.
func responseSession(line []byte) string {
	if !bytes.Contains(line, []byte(`"sessionId"`)) {
		return ""
	}
	var m struct {
		Method string `json:"method"`
		Result struct {
			SessionID string `json:"sessionId"`
		} `json:"result"`
	}
	if json.Unmarshal(line, &m) != nil || m.Method != "" {
		return ""
	}
	return m.Result.SessionID
}

// guard copies the editor's messages from in to the SDK's reader (pw),
// one line each, and answers itself what the SDK would only log: a line
// that is not JSON (parse error), not one JSON-RPC object (a batch, a
// number, a message without "jsonrpc": "2.0"), or longer than maxLine. The
// connection goes on after each. seen, when set, is told of each line
// passed on, before the SDK can read it. It closes pw when in ends.
func guard(in io.Reader, pw *io.PipeWriter, out io.Writer, seen func([]byte)) {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, err := readLine(r)
		if len(bytes.TrimSpace(line)) > 0 || errors.Is(err, errLineTooLong) {
			if reply := checkLine(line, err); reply != nil {
				_, _ = out.Write(reply) // a closed output ends the connection anyway
			} else {
				if seen != nil {
					seen(line)
				}
				if _, werr := pw.Write(append(line, '\n')); werr != nil {
					return
				}
			}
		}
		if err != nil && !errors.Is(err, errLineTooLong) {
			pw.CloseWithError(nil)
			return
		}
	}
}

var errLineTooLong = errors.New("message longer than 10 MiB")

// tooLongHead is how much of a dropped message is kept to find its id.
const tooLongHead = 4096

// readLine reads one line without its newline; a line longer than maxLine
// is read to its end and dropped (errLineTooLong), and only its first
// tooLongHead bytes are returned, so that its id can still be answered.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > maxLine {
			line = append(line, chunk...)[:min(len(line)+len(chunk), tooLongHead)]
			line = bytes.Clone(line)
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = r.ReadSlice('\n')
			}
			if err == nil {
				return line, errLineTooLong
			}
			return nil, err
		}
		line = append(line, chunk...)
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil:
			return line, err
		}
		return bytes.TrimRight(line, "\r\n"), nil
	}
}

// headID is the id of a JSON-RPC request from its first bytes alone (the
// rest dropped): the value of its first "id" when that and "method" come
// among the object's members before one that is cut off, else nil (a
// response's id is the editor's own numbering, not to be answered). Pure.
func headID(head []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(head))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var id json.RawMessage
	method := false
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil // cut off inside this member
		}
		switch key {
		case "id":
			var val any
			if id != nil {
				break
			}
			if json.Unmarshal(v, &val) != nil {
				return nil
			}
			switch val.(type) {
			case string, float64:
				id = v
			default:
				return nil
			}
		case "method":
			method = true
		case "result", "error":
			return nil
		}
		if id != nil && method {
			return id
		}
	}
	return nil
}

// rpcError is a JSON-RPC error response.
type rpcError struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   struct {
		Code    int            `json:"code"`
		Message string         `json:"message"`
		Data    map[string]any `json:"data,omitempty"`
	} `json:"error"`
}

// checkLine is nil for a line to pass on to the SDK, else the error
// response to write. readErr is errLineTooLong for a dropped line. Pure.
func checkLine(line []byte, readErr error) []byte {
	if errors.Is(readErr, errLineTooLong) {
		return errorReply(headID(line), -32600, "Invalid request",
			"the message is longer than 10 MiB and was dropped (a picture in a prompt may be at most about 7.5 MiB)")
	}
	var v any
	if err := json.Unmarshal(line, &v); err != nil {
		return errorReply(nil, -32700, "Parse error", "the message is not JSON: "+err.Error())
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return errorReply(nil, -32600, "Invalid request", "a message must be one JSON-RPC object (batches are not supported)")
	}
	var id json.RawMessage
	if raw, ok := obj["id"]; ok {
		switch raw.(type) {
		case string, float64, nil:
			id, _ = json.Marshal(raw)
		default:
			return errorReply(nil, -32600, "Invalid request", "the id must be a string or a number")
		}
	}
	if obj["jsonrpc"] != "2.0" {
		return errorReply(id, -32600, "Invalid request", `the message must say "jsonrpc": "2.0"`)
	}
	if m, has := obj["method"]; has {
		if name, ok := m.(string); !ok || name == "" {
			return errorReply(id, -32600, "Invalid request", "the method must be a non-empty string")
		}
	} else if id == nil {
		return errorReply(nil, -32600, "Invalid request", "the message has neither a method nor an id")
	}
	// The SDK reads a message into this shape and drops one that does not
	// fit (an error that is not an object with a numeric code, say).
	var shaped struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Data    any    `json:"data"`
		} `json:"error"`
		Params json.RawMessage `json:"params"`
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(line, &shaped); err != nil {
		return errorReply(id, -32600, "Invalid request", "the message is not JSON-RPC: "+err.Error())
	}
	return nil
}

func errorReply(id json.RawMessage, code int, message, detail string) []byte {
	e := rpcError{JSONRPC: "2.0", ID: id}
	if e.ID == nil {
		e.ID = json.RawMessage("null")
	}
	e.Error.Code, e.Error.Message, e.Error.Data = code, message, map[string]any{"error": detail}
	b, _ := json.Marshal(e)
	return append(b, '\n')
}
