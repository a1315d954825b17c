package tools

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// execute_code limits.
const (
	// codeMaxBytes bounds a program's text.
	codeMaxBytes = 256 << 10
	// CodeMaxToolCalls bounds the tool calls one program makes.
	CodeMaxToolCalls = 50
)

// ExecuteCodeName is the execute_code tool's name.
const ExecuteCodeName = "execute_code"

const executeCodeDescriptionHead = `Run a short Python, Node.js or Bash program and return what it prints: for computing, transforming data, or many small tool steps in one call. ` +
	`The program runs like a terminal command: in the working directory or workdir (under the working directory or a write root), with the same clean environment, stdin empty, a timeout (default 180 s, at most 3600), and every process it started killed when it ends. `

const executeCodeDescriptionTail = `Print what you need: only the output (stdout and stderr, head and tail kept when long) comes back, as JSON {"output","exit_code","tool_calls"} plus "error" when it timed out. ` +
	`A model call whose tool calls are all execute_code does not use up an iteration of the turn.`

// ExecuteCodeTool runs a program that may call Tools through a local RPC:
// an HTTP server on a Unix socket in a private directory, reached with a
// per-run token, that exists while the program runs. Tools holds what the
// program may call (WithCodeTools fills it from the offered tools); nil:
// nothing.
type ExecuteCodeTool struct{ Tools *Registry }

// codeResult is execute_code's JSON result.
type codeResult struct {
	terminalResult
	ToolCalls int `json:"tool_calls"`
}

// Name implements Tool.
func (ExecuteCodeTool) Name() string { return ExecuteCodeName }

// Idempotent implements Tool: a program can have any side effect.
func (ExecuteCodeTool) Idempotent() bool { return false }

// BoundsOwnOutput implements OutputBounder: the output is cut to the cap
// and kept whole like a terminal command's.
func (ExecuteCodeTool) BoundsOwnOutput() bool { return true }

// Definition implements Tool. It names the tools the program may call, so
// it is stable for a given Tools.
func (t ExecuteCodeTool) Definition() openai.Tool {
	var rpc string
	if names := t.callable(); len(names) == 0 {
		rpc = `Talaria's tools cannot be called from the program here. `
	} else {
		rpc = `The program can call Talaria's tools (` + strings.Join(names, ", ") + `): in Python, "import talaria_tools" then e.g. talaria_tools.read_file("notes.txt") or talaria_tools.search_files(pattern="TODO"); ` +
			`in Node.js, const t = require("talaria_tools"); then e.g. await t.read_file({path: "notes.txt"}). ` +
			`Required arguments may be given in order, the others by name, as in the tool's schema; each call returns the tool's result (parsed when it is JSON) and raises (Python talaria_tools.ToolError, Node a rejected promise) when the tool fails. ` +
			fmt.Sprintf(`At most %d tool calls per run; a terminal command that would need approval is refused there (call the terminal tool for it). Bash programs cannot call tools. `, CodeMaxToolCalls)
	}
	return functionTool(t.Name(), executeCodeDescriptionHead+rpc+executeCodeDescriptionTail, string(codeDecoding.def.Function.Parameters.(json.RawMessage)))
}

// callable are the names of the tools the program may call, sorted.
func (t ExecuteCodeTool) callable() []string {
	if t.Tools == nil {
		return nil
	}
	return t.Tools.Names()
}

// WithCodeTools returns all with its execute_code tool (if any) given the
// tools of all a program may call. Pure.
func WithCodeTools(all []Tool) ([]Tool, error) {
	var callable []Tool
	for _, t := range all {
		if MetaOf(t).FromCode {
			callable = append(callable, t)
		}
	}
	reg, err := NewRegistry(callable...)
	if err != nil {
		return nil, fmt.Errorf("execute_code tools: %w", err)
	}
	out := make([]Tool, len(all))
	for i, t := range all {
		if _, ok := t.(ExecuteCodeTool); ok {
			t = ExecuteCodeTool{Tools: reg}
		}
		out[i] = t
	}
	return out, nil
}

// codeArgs are an execute_code call's arguments.
type codeArgs struct {
	Code     string `json:"code" jsonschema:"The program's source."`
	Language string `json:"language,omitempty" jsonschema:"python (python3, the default), node or bash."`
	Timeout  int    `json:"timeout,omitempty" jsonschema:"Seconds before the program is killed. Default 180, at most 3600."`
	Workdir  string `json:"workdir,omitempty" jsonschema:"Directory to run in, absolute or relative to the working directory; it must lie under the working directory or a write root. Default: the working directory."`
}

// codeDecoding decodes execute_code's arguments and gives their schema;
// the tool itself is ExecuteCodeTool, whose description names the tools a
// program may call.
var codeDecoding = Define(Spec[codeArgs]{Name: ExecuteCodeName, Run: func(context.Context, Env, codeArgs) (string, error) { return "", nil }}).(*typed[codeArgs])

// languageAliases maps accepted spellings to a language.
var languageAliases = map[string]string{
	"": "python", "python": "python", "python3": "python", "py": "python",
	"node": "node", "nodejs": "node", "javascript": "node", "js": "node",
	"bash": "bash", "sh": "bash", "shell": "bash",
}

// decodeCode reads an execute_code call's arguments, strictly, with their
// defaults filled in.
func decodeCode(raw json.RawMessage) (codeArgs, error) {
	a, err := codeDecoding.decode(raw)
	if err != nil {
		return a, err
	}
	if strings.TrimSpace(a.Code) == "" {
		return a, invalidArgs(ExecuteCodeName, `"code" must not be empty`)
	}
	if len(a.Code) > codeMaxBytes {
		return a, invalidArgs(ExecuteCodeName, `"code" is %d bytes; at most %d (write a longer program to a file and run it with terminal)`, len(a.Code), codeMaxBytes)
	}
	language, ok := languageAliases[strings.ToLower(strings.TrimSpace(a.Language))]
	if !ok {
		return a, invalidArgs(ExecuteCodeName, `"language" must be python, node or bash, got %q`, a.Language)
	}
	if a.Timeout < 0 {
		return a, invalidArgs(ExecuteCodeName, `"timeout" must be a positive number of seconds, got %d`, a.Timeout)
	}
	a.Language, a.Workdir, a.Timeout = language, strings.TrimSpace(a.Workdir), min(cmp.Or(a.Timeout, TerminalDefaultTimeout), TerminalMaxTimeout)
	return a, nil
}

// CodeCall reads an execute_code call for the approval assessment: the
// shell text that runs the same program (python3 -c CODE, node -e CODE, or
// a Bash program itself) and its workdir. ok is false when the arguments
// are invalid, and the tool then refuses them too.
func CodeCall(args string) (command, workdir string, ok bool) {
	c, err := decodeCode(json.RawMessage(args))
	if err != nil {
		return "", "", false
	}
	switch c.Language {
	case "python":
		command = "python3 -c " + shellQuote(c.Code)
	case "node":
		command = "node -e " + shellQuote(c.Code)
	default:
		command = c.Code
	}
	return command, c.Workdir, true
}

// interpreters are the programs that run each language, in order of
// preference, and the name of the program file.
var interpreters = map[string]struct {
	names []string
	file  string
}{
	"python": {[]string{"python3", "python"}, "main.py"},
	"node":   {[]string{"node", "nodejs"}, "main.js"},
	"bash":   {[]string{"bash", "sh"}, "main.sh"},
}

// Run implements Tool.
func (t ExecuteCodeTool) Run(ctx context.Context, env Env, raw json.RawMessage) (string, error) {
	call, err := decodeCode(raw)
	if err != nil {
		return "", err
	}
	dir, err := env.terminalDir(call.Workdir)
	if err != nil {
		return "", fmt.Errorf("execute_code: %w", err)
	}
	lang := interpreters[call.Language]
	interp := ""
	for _, n := range lang.names {
		if p, err := exec.LookPath(n); err == nil {
			interp = p
			break
		}
	}
	if interp == "" {
		return "", fmt.Errorf("execute_code: no %s interpreter on this machine (looked for %s on PATH)", call.Language, strings.Join(lang.names, ", "))
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("execute_code: %w: %w", ErrCancelled, err)
	}
	scratch, err := codeScratchDir()
	if err != nil {
		return "", fmt.Errorf("execute_code: %w", err)
	}
	defer os.RemoveAll(scratch)
	program := filepath.Join(scratch, lang.file)
	if err := os.WriteFile(program, []byte(call.Code), 0o600); err != nil {
		return "", fmt.Errorf("execute_code: write the program: %w", err)
	}
	environ := env.processEnv()
	var rpc *codeRPC
	if call.Language != "bash" && t.Tools != nil && len(t.Tools.Names()) > 0 {
		if err := writeCodeHelper(scratch, call.Language, t.Tools); err != nil {
			return "", fmt.Errorf("execute_code: %w", err)
		}
		rpc, err = startCodeRPC(ctx, filepath.Join(scratch, "rpc.sock"), t.Tools, env)
		if err != nil {
			return "", fmt.Errorf("execute_code: start the tool RPC: %w", err)
		}
		defer rpc.close()
		environ = append(environ, "TALARIA_RPC_SOCKET="+rpc.socket, "TALARIA_RPC_TOKEN="+rpc.token)
	}
	environ = append(environ, "PYTHONDONTWRITEBYTECODE=1", "PYTHONUNBUFFERED=1")
	box, done := env.commandSandbox(dir, scratch)
	res, err := runCommand(ctx, "exec "+shellQuote(interp)+" "+shellQuote(program), dir, environ,
		time.Duration(call.Timeout)*time.Second, max(env.maxOutput()-200, env.maxOutput()/2), env.spillTarget(), box)
	res.GitNotKept = done()
	if err != nil {
		return "", fmt.Errorf("execute_code: %w", err)
	}
	res.Sandbox = sandboxHint(res, env.Policy.Sandbox)
	out := codeResult{terminalResult: res}
	if rpc != nil {
		out.ToolCalls = rpc.count()
	}
	return marshalResult(out)
}

// codeScratchDir makes the private directory of one run (the program, the
// helper module and the RPC socket), short enough for a socket's path.
func codeScratchDir() (string, error) {
	dir, err := os.MkdirTemp("", "talaria-code-")
	if err == nil && len(dir) > 80 {
		os.RemoveAll(dir)
		dir, err = os.MkdirTemp("/tmp", "talaria-code-")
	}
	if err != nil {
		return "", fmt.Errorf("scratch directory: %w", err)
	}
	return dir, nil
}

// startCodeRPC serves the program's tool calls on a Unix socket at path
// until close; the calls run under ctx.
func startCodeRPC(ctx context.Context, path string, reg *Registry, env Env) (*codeRPC, error) {
	token, err := randomToken()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	s := &codeRPC{tools: reg, env: env, token: token, socket: path}
	// A call runs under the run's ctx and ends when the program hangs up.
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			slog.Warn("execute_code: the tool RPC stopped", "err", err)
		}
	}()
	return s, nil
}

// execute_code is a built-in tool.
var _ = builtin(func(Services) Tool { return ExecuteCodeTool{} })

// Meta implements Described.
func (ExecuteCodeTool) Meta() Meta {
	return Meta{
		Toolset:      "shell",
		Guidance:     "For computation, or many small tool steps whose intermediate results you need not read, write one execute_code program (Python: import talaria_tools) instead of many separate calls.",
		GuidanceRank: 110,
		Approval:     "the program is assessed as a terminal command; its own terminal calls run only if safe",
	}
}
