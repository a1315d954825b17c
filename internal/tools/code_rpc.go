package tools

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
)

// codeRPCBodyMax bounds one tool call's request (a write_file's content).
const codeRPCBodyMax = 16 << 20

// codeRPC answers a running program's tool calls: POST /call with
// {"tool","arguments"} and the run's bearer token, answered
// {"result","error"} — the tool's result text and whether it is an error,
// exactly what the model would have read.
type codeRPC struct {
	tools         *Registry
	env           Env
	token, socket string
	srv           *http.Server

	mu    sync.Mutex
	calls int
}

// codeReply is the RPC's answer to one call.
type codeReply struct {
	Result string `json:"result"`
	Error  bool   `json:"error"`
}

// ServeHTTP implements http.Handler.
func (s *codeRPC) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	reply := func(status int, rep codeReply) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(rep)
	}
	refuse := func(status int, format string, v ...any) {
		reply(status, codeReply{Result: errorContent(fmt.Errorf(format, v...), 2000), Error: true})
	}
	if r.Method != http.MethodPost || r.URL.Path != "/call" {
		refuse(http.StatusNotFound, "execute_code RPC: only POST /call is served")
		return
	}
	got := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if subtle.ConstantTimeCompare([]byte(got), []byte(s.token)) != 1 {
		refuse(http.StatusUnauthorized, "execute_code RPC: wrong or missing token (TALARIA_RPC_TOKEN)")
		return
	}
	var req struct {
		Tool      string          `json:"tool"`
		Arguments json.RawMessage `json:"arguments"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, codeRPCBodyMax))
	if err := dec.Decode(&req); err != nil {
		refuse(http.StatusBadRequest, "execute_code RPC: the request is not {\"tool\",\"arguments\"} JSON within %d bytes: %v", codeRPCBodyMax, err)
		return
	}
	reply(http.StatusOK, s.call(r.Context(), req.Tool, req.Arguments))
}

// call runs one tool call of the program, if the program may make it.
func (s *codeRPC) call(ctx context.Context, name string, args json.RawMessage) codeReply {
	refused := func(format string, v ...any) codeReply {
		return codeReply{Result: errorContent(fmt.Errorf(format, v...), 2000), Error: true}
	}
	if _, ok := s.tools.Lookup(name); !ok || s.env.Allowed != nil && !s.env.Allowed(name) {
		return refused("%s cannot be called from execute_code here; these can: %s", name, strings.Join(s.allowed(), ", "))
	}
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	if name == "terminal" {
		if _, outside := TerminalEscalation(string(args)); outside {
			return refused("a program cannot ask to run a command outside the sandbox; call the terminal tool with outside_sandbox instead")
		}
		if cmd, wd, ok := TerminalCall(string(args)); ok {
			if s.env.CommandGate == nil {
				return refused("terminal commands cannot run from execute_code here; call the terminal tool")
			}
			if err := s.env.CommandGate(cmd, wd); err != nil {
				return refused("%v", err)
			}
		}
	}
	s.mu.Lock()
	if s.calls >= CodeMaxToolCalls {
		s.mu.Unlock()
		return refused("this program already made %d tool calls, the most one execute_code run may make; finish with what you have, or split the work", CodeMaxToolCalls)
	}
	s.calls++
	n := s.calls
	s.mu.Unlock()
	// A program's calls never step outside the sandbox, whatever their id.
	env := s.env
	env.Escalated = nil
	res := s.tools.Call(ctx, env, Call{ID: fmt.Sprintf("%s.code%d", s.env.CallID, n), Name: name, Arguments: string(args)})
	return codeReply{Result: res.Content, Error: res.IsError}
}

// allowed are the tools the program may call.
func (s *codeRPC) allowed() []string {
	var out []string
	for _, n := range s.tools.Names() {
		if s.env.Allowed == nil || s.env.Allowed(n) {
			out = append(out, n)
		}
	}
	return out
}

// count is the number of tool calls the program made.
func (s *codeRPC) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// close stops serving; calls in flight are cut.
func (s *codeRPC) close() { _ = s.srv.Close() }

// randomToken is a fresh secret of 32 hex digits.
func randomToken() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}
