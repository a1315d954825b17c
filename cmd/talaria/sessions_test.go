package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/talaria-agent/talaria"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

// sessionsStore makes a database with a session "root" compacted twice
// (root~1, root~2) and a session "solo", and returns its path.
func sessionsStore(t *testing.T) string {
	t.Helper()
	ctx := t.Context()
	dsn := filepath.Join(t.TempDir(), "talaria.db")
	st, err := models.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, id := range []string{"root", "solo"} {
		if _, err := st.NextTurn(ctx, id, "m", ""); err != nil {
			t.Fatal(err)
		}
		msg := models.Message{SessionID: id, IdemKey: id + "/1", Role: "user", Content: "hello from " + id}
		if _, err := st.AppendMessages(ctx, []models.Message{msg}); err != nil {
			t.Fatal(err)
		}
	}
	parent := "root"
	for range 2 {
		msgs, err := st.Messages(ctx, parent)
		if err != nil {
			t.Fatal(err)
		}
		child, err := st.CompactSession(ctx, parent, "prompt", append(msgs, models.Message{Role: "user", Content: "summary"}))
		if err != nil {
			t.Fatal(err)
		}
		parent = child.ID
	}
	return dsn
}

// runSessions runs "talaria sessions ARGS --db DSN" and returns its output.
func runSessions(t *testing.T, dsn string, args ...string) string {
	t.Helper()
	t.Setenv("TALARIA_HOME", t.TempDir())
	cmd := newSessionsCommand()
	registerGlobalFlags(cmd) // --db is a global flag of the root
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(append(args, "--db", dsn))
	if err := cmd.ExecuteContext(t.Context()); err != nil {
		t.Fatalf("sessions %v: %v\n%s", args, err, out.String())
	}
	return out.String()
}

func TestSessionsListShowsParents(t *testing.T) {
	dsn := sessionsStore(t)
	out := runSessions(t, dsn, "list")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 5 || strings.Join(strings.Fields(lines[0]), " ") != "SESSION PARENT TURNS MODEL UPDATED FIRST MESSAGE" {
		t.Fatalf("list:\n%s", out)
	}
	parents := map[string]string{}
	for _, line := range lines[1:] {
		f := strings.Fields(line)
		parents[f[0]] = f[1]
		if !strings.HasSuffix(line, "hello from "+strings.TrimSuffix(strings.TrimSuffix(f[0], "~1"), "~2")) {
			t.Errorf("first message missing: %q", line)
		}
	}
	want := map[string]string{"root": "-", "solo": "-", "root~1": "root", "root~2": "root~1"}
	for id, parent := range want {
		if parents[id] != parent {
			t.Errorf("parent of %s = %q, want %q\n%s", id, parents[id], parent, out)
		}
	}
}

func TestSessionsShowLineage(t *testing.T) {
	dsn := sessionsStore(t)
	tests := []struct {
		id, want string // want "" means no lineage line
	}{
		{"root", "  lineage root, generation 0: continued in root~1\n"},
		{"root~1", "  lineage root, generation 1: compacted from root, continued in root~2\n"},
		{"root~2", "  lineage root, generation 2: compacted from root~1\n"},
		{"solo", ""},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			out := runSessions(t, dsn, "show", tt.id)
			header, rest, _ := strings.Cut(out, "\n")
			if !strings.HasPrefix(header, "session "+tt.id+" — model m") {
				t.Fatalf("show:\n%s", out)
			}
			if tt.want == "" {
				if strings.Contains(out, "lineage") {
					t.Fatalf("a lineage line for a lone session:\n%s", out)
				}
			} else if !strings.HasPrefix(rest, tt.want) {
				t.Fatalf("show lacks %q after its header:\n%s", tt.want, out)
			}
		})
	}

	var shown talaria.SessionDetail
	out := runSessions(t, dsn, "show", "root~1", "--json")
	if err := json.Unmarshal([]byte(out), &shown); err != nil {
		t.Fatal(err)
	}
	if shown.Session.ParentSessionID != "root" || len(shown.Lineage) != 3 || shown.Lineage[2].ID != "root~2" ||
		len(shown.Messages) == 0 || shown.Messages[0].SessionID != "root~1" || len(shown.Turns) != 0 {
		t.Fatalf("show --json = %+v", shown)
	}
	assertSnakeCase(t, out)
}

func TestSessionsSearchGroupsByConversation(t *testing.T) {
	dsn := sessionsStore(t)
	out := runSessions(t, dsn, "search", "hello")
	// "hello from root" is in root and copied into root~1 and root~2: one
	// conversation, one hit (the newest copy); "hello from solo" is another.
	if got := strings.Count(out, "conversation "); got != 2 {
		t.Fatalf("%d conversations, want 2:\n%s", got, out)
	}
	if strings.Count(out, "» user: hello from root") != 1 || strings.Count(out, "» user: hello from solo") != 1 {
		t.Fatalf("hits:\n%s", out)
	}
	if !strings.Contains(out, "conversation root (sessions with hits: root~2)") {
		t.Fatalf("the root's hit is not shown in its newest session:\n%s", out)
	}
	var groups []talaria.SearchGroup
	out = runSessions(t, dsn, "search", "solo", "--json")
	if err := json.Unmarshal([]byte(out), &groups); err != nil || len(groups) != 1 || groups[0].LineageID != "solo" ||
		len(groups[0].Hits) != 1 || groups[0].Hits[0].Message.Content != "hello from solo" {
		t.Fatalf("json: %v %+v", err, groups)
	}
	assertSnakeCase(t, out)
	if out := runSessions(t, dsn, "search", "nowhere-to-be-found"); strings.TrimSpace(out) != "no matches" {
		t.Fatalf("no hits:\n%s", out)
	}
}

func TestSessionsSearchNeedsWords(t *testing.T) {
	t.Setenv("TALARIA_HOME", t.TempDir())
	cmd := newSessionsCommand()
	registerGlobalFlags(cmd) // --db is a global flag of the root
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	cmd.SetArgs([]string{"search", " "})
	if err := cmd.ExecuteContext(t.Context()); err == nil || !strings.Contains(err.Error(), "needs the words") {
		t.Fatalf("err = %v", err)
	}
}

func TestSessionsListJSON(t *testing.T) {
	dsn := sessionsStore(t)
	for _, flag := range [][]string{{"--json"}, {"-o", "json"}} {
		out := runSessions(t, dsn, append([]string{"list"}, flag...)...)
		var list []map[string]any
		if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 4 {
			t.Fatalf("%v: %v\n%s", flag, err, out)
		}
		if strings.Contains(out, `"prompt"`) || strings.Contains(out, `"system_prompt"`) {
			t.Errorf("%v: the system prompt is printed:\n%s", flag, out)
		}
		byID := map[string]map[string]any{}
		for _, s := range list {
			for k := range s {
				if k != strings.ToLower(k) {
					t.Errorf("%v: key %q is not snake_case", flag, k)
				}
			}
			byID[s["id"].(string)] = s
		}
		tests := []struct {
			id, parent, first string
			hasPrompt         bool
			promptLen         float64
		}{
			{"root", "", "hello from root", false, 0},
			{"root~1", "root", "hello from root", true, float64(len("prompt"))},
			{"solo", "", "hello from solo", false, 0},
		}
		for _, tt := range tests {
			s := byID[tt.id]
			parent, _ := s["parent_session_id"].(string)
			if parent != tt.parent || s["first_message"] != tt.first || s["has_system_prompt"] != tt.hasPrompt ||
				s["system_prompt_length"] != tt.promptLen || s["model"] != "m" || s["lineage_id"] != "root" && tt.id != "solo" {
				t.Errorf("%v: %s = %v", flag, tt.id, s)
			}
		}
	}
}

// TestSessionsOutputFlag: -o json is --json on show and search; an unknown
// format is a usage error naming it.
func TestSessionsOutputFlag(t *testing.T) {
	dsn := sessionsStore(t)
	for _, args := range [][]string{{"show", "solo"}, {"search", "solo"}} {
		a, b := runSessions(t, dsn, append(args, "--json")...), runSessions(t, dsn, append(args, "-o", "json")...)
		if a != b || !json.Valid([]byte(a)) {
			t.Errorf("%v: --json and -o json differ:\n%s\n%s", args, a, b)
		}
		t.Setenv("TALARIA_HOME", t.TempDir())
		cmd := newSessionsCommand()
		registerGlobalFlags(cmd) // --db is a global flag of the root
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		cmd.SetArgs(append(args, "-o", "xml", "--db", dsn))
		if err := cmd.ExecuteContext(t.Context()); err == nil || !strings.Contains(err.Error(), `--output "xml"`) {
			t.Errorf("%v -o xml: %v", args, err)
		}
	}
}

// assertSnakeCase fails when a JSON document has a key that is not
// snake_case (lower-case letters, digits and underscores).
func assertSnakeCase(t *testing.T, doc string) {
	t.Helper()
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if k != strings.ToLower(k) || strings.ContainsAny(k, "- ") {
					t.Errorf("key %q is not snake_case in:\n%s", k, doc)
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, doc)
	}
	walk(v)
}

// TestSessionsListHidesMemoryReviews: the sessions the engine makes to
// review memory (named by workflows.ReviewSessionID) are listed only with
// --all.
func TestSessionsListHidesMemoryReviews(t *testing.T) {
	dsn := sessionsStore(t)
	st, err := models.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	review := workflows.ReviewSessionID("solo", 1)
	if !models.IsBackgroundSession(review) {
		t.Fatalf("%s is not recognised as a memory review", review)
	}
	if _, err := st.NextTurn(t.Context(), review, "m", ""); err != nil {
		t.Fatal(err)
	}
	st.Close()
	tests := []struct {
		args []string
		want bool
	}{
		{[]string{"list"}, false},
		{[]string{"list", "-o", "json"}, false},
		{[]string{"list", "--all"}, true},
		{[]string{"list", "-a", "--json"}, true},
	}
	for _, tt := range tests {
		out := runSessions(t, dsn, tt.args...)
		if got := strings.Contains(out, review); got != tt.want {
			t.Errorf("sessions %v lists %s: %v, want %v\n%s", tt.args, review, got, tt.want, out)
		}
		if !strings.Contains(out, "solo") {
			t.Errorf("sessions %v lost a conversation:\n%s", tt.args, out)
		}
	}
}
