package tools

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// pythonHelper is the fixed part of the talaria_tools module a Python
// program imports; a function per callable tool follows it.
const pythonHelper = `"""Talaria's tools for an execute_code program.

Each function calls the tool of the same name and returns its result: a
dict or list when the tool answers JSON, else the text. A tool that fails
or refuses raises ToolError with the tool's message. call(tool, **arguments)
reaches any of them by name.
"""
import http.client as _http
import json as _json
import os as _os
import socket as _socket


class ToolError(Exception):
    """A tool failed or refused the call."""


class _Connection(_http.HTTPConnection):
    def __init__(self, path):
        super().__init__("talaria")
        self._path = path

    def connect(self):
        self.sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        self.sock.connect(self._path)


def call(tool, **arguments):
    """Call the tool named tool with arguments (None values are left out)."""
    path = _os.environ.get("TALARIA_RPC_SOCKET")
    if not path:
        raise ToolError("Talaria's tools are not reachable from this process (TALARIA_RPC_SOCKET is not set)")
    args = {k: v for k, v in arguments.items() if v is not None}
    conn = _Connection(path)
    try:
        conn.request("POST", "/call", body=_json.dumps({"tool": tool, "arguments": args}),
                     headers={"Content-Type": "application/json",
                              "Authorization": "Bearer " + _os.environ.get("TALARIA_RPC_TOKEN", "")})
        reply = _json.loads(conn.getresponse().read().decode("utf-8"))
    finally:
        conn.close()
    result = reply.get("result", "")
    try:
        value = _json.loads(result)
    except ValueError:
        value = result
    if reply.get("error"):
        if isinstance(value, dict) and "error" in value:
            raise ToolError(value["error"])
        raise ToolError(result)
    return value
`

// nodeHelper is the fixed part of the talaria_tools module a Node.js
// program requires; a function per callable tool follows it.
const nodeHelper = `"use strict";
// Talaria's tools for an execute_code program. Each function calls the tool
// of the same name and resolves to its result (parsed when it is JSON); a
// tool that fails or refuses rejects with a ToolError. Arguments are one
// object ({path: "a.txt"}) or the required ones in order.
const http = require("http");

class ToolError extends Error {}

function call(tool, args) {
  return new Promise((resolve, reject) => {
    const socketPath = process.env.TALARIA_RPC_SOCKET;
    if (!socketPath) {
      reject(new ToolError("Talaria's tools are not reachable from this process (TALARIA_RPC_SOCKET is not set)"));
      return;
    }
    const clean = {};
    for (const [k, v] of Object.entries(args || {})) if (v !== undefined && v !== null) clean[k] = v;
    const body = JSON.stringify({ tool, arguments: clean });
    const req = http.request({
      socketPath, path: "/call", method: "POST", agent: false,
      headers: { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body),
        Authorization: "Bearer " + (process.env.TALARIA_RPC_TOKEN || "") },
    }, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => {
        let reply;
        try { reply = JSON.parse(Buffer.concat(chunks).toString("utf8")); } catch (e) {
          reject(new ToolError("unreadable answer from the tool RPC: " + e.message));
          return;
        }
        let value = reply.result;
        try { value = JSON.parse(reply.result); } catch (e) { /* text */ }
        if (reply.error) {
          reject(new ToolError(value && typeof value === "object" && value.error ? value.error : reply.result));
          return;
        }
        resolve(value);
      });
    });
    req.on("error", (e) => reject(new ToolError("tool RPC: " + e.message)));
    req.end(body);
  });
}

function tool(name, required) {
  return function (...a) {
    if (a.length === 1 && a[0] !== null && typeof a[0] === "object" && !Array.isArray(a[0])) return call(name, a[0]);
    const args = {};
    required.forEach((n, i) => { if (i < a.length) args[n] = a[i]; });
    const rest = a[required.length];
    if (rest !== null && typeof rest === "object") Object.assign(args, rest);
    return call(name, args);
  };
}

module.exports = { call, ToolError };
`

// pyIdent is a name Python and JavaScript both accept as an identifier.
var pyIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// reservedNames are Python and JavaScript keywords a parameter cannot be.
var reservedNames = strings.Fields(`False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield
	case catch const debugger default delete do export extends function let new null switch this throw typeof var void`)

// toolParams reads a tool's schema: its required parameters in order and
// the others sorted. ok is false when a name is no identifier.
func toolParams(t Tool) (required, optional []string, ok bool) {
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	def := t.Definition()
	if def.Function == nil {
		return nil, nil, false
	}
	raw, err := json.Marshal(def.Function.Parameters)
	if err != nil || json.Unmarshal(raw, &schema) != nil {
		return nil, nil, false
	}
	for name := range schema.Properties {
		if !pyIdent.MatchString(name) || slices.Contains(reservedNames, name) {
			return nil, nil, false
		}
		if !slices.Contains(schema.Required, name) {
			optional = append(optional, name)
		}
	}
	sort.Strings(optional)
	for _, r := range schema.Required {
		if _, in := schema.Properties[r]; in {
			required = append(required, r)
		}
	}
	return required, optional, true
}

// pythonFunction is the talaria_tools function of one tool.
func pythonFunction(t Tool) string {
	name := t.Name()
	doc := firstSentence(t.Definition().Function.Description)
	required, optional, ok := toolParams(t)
	if !ok {
		return fmt.Sprintf("\n\ndef %s(**arguments):\n    %q\n    return call(%q, **arguments)\n", name, doc, name)
	}
	params := slices.Clone(required)
	if len(optional) > 0 {
		params = append(params, "*")
		for _, o := range optional {
			params = append(params, o+"=None")
		}
	}
	var pass []string
	for _, p := range append(slices.Clone(required), optional...) {
		pass = append(pass, p+"="+p)
	}
	return fmt.Sprintf("\n\ndef %s(%s):\n    %q\n    return call(%q%s)\n", name, strings.Join(params, ", "), doc, name, prefixed(", ", strings.Join(pass, ", ")))
}

// nodeFunction is the talaria_tools export of one tool.
func nodeFunction(t Tool) string {
	required, _, _ := toolParams(t)
	names, _ := json.Marshal(required)
	if required == nil {
		names = []byte("[]")
	}
	return fmt.Sprintf("module.exports[%q] = tool(%q, %s);\n", t.Name(), t.Name(), names)
}

// writeCodeHelper writes the talaria_tools module of language into dir,
// where the program finds it (next to it for Python, in node_modules for
// Node.js).
func writeCodeHelper(dir, language string, reg *Registry) error {
	var b strings.Builder
	path := filepath.Join(dir, "talaria_tools.py")
	switch language {
	case "python":
		b.WriteString(pythonHelper)
		for _, n := range reg.Names() {
			t, _ := reg.Lookup(n)
			b.WriteString(pythonFunction(t))
		}
	case "node":
		path = filepath.Join(dir, "node_modules", "talaria_tools", "index.js")
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return fmt.Errorf("helper module: %w", err)
		}
		b.WriteString(nodeHelper)
		for _, n := range reg.Names() {
			t, _ := reg.Lookup(n)
			b.WriteString(nodeFunction(t))
		}
	default:
		return nil
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("helper module: %w", err)
	}
	return nil
}

// firstSentence is a description's first sentence.
func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

// prefixed is s after sep, or nothing when s is empty.
func prefixed(sep, s string) string {
	if s == "" {
		return ""
	}
	return sep + s
}
