package tools

import (
	"strings"
	"testing"
)

// TestSkillTools: skill_manage creates, patches and writes files of a
// skill; skills_list and skill_view read them; bad input is the model's
// to correct.
func TestSkillTools(t *testing.T) {
	home := t.TempDir()
	env := Env{Policy: Policy{Home: home}}
	manage := SkillManage("")
	steps := []struct {
		tool      Tool
		args, has string
	}{
		{manage, mustJSON(t, map[string]string{"action": "create", "name": "deploy", "content": "---\nname: deploy\ndescription: Ship it\nversion: 1\n---\nRun make release.\n"}), "created"},
		{manage, `{"action":"patch","name":"deploy","old_string":"make release","new_string":"make release VERSION=x"}`, "patched SKILL.md"},
		{manage, `{"action":"patch","name":"deploy","old_string":"make release","new_string":"make release VERSION=x"}`, "already applied"},
		{manage, `{"action":"write_file","name":"deploy","file":"references/notes.md","content":"remember the tag"}`, "wrote references/notes.md"},
		{SkillsList(""), `{}`, `"name":"deploy","description":"Ship it","version":"1","files":["references/notes.md"]`},
		{SkillView(""), `{"name":"deploy"}`, "make release VERSION=x"},
		{SkillView(""), `{"name":"deploy","file":"references/notes.md"}`, "remember the tag"},
	}
	for _, s := range steps {
		out, err := runTool(t, s.tool, env, s.args)
		if err != nil || !strings.Contains(out, s.has) {
			t.Fatalf("%s %s: %s %v, want %q", s.tool.Name(), s.args, out, err, s.has)
		}
	}
	for _, tt := range []struct{ args, errHas string }{
		{`{"action":"rename","name":"deploy"}`, `"action" must be`},
		{`{"action":"create","name":"Bad Name","content":"x"}`, "lower-case"},
		{`{"action":"edit","name":"deploy","content":"no front matter"}`, "front matter"},
		{`{"action":"delete","name":"ghost"}`, "no such skill"},
		{`{"action":"write_file","name":"deploy","file":"../../config.yaml","content":"x"}`, "inside the skill"},
	} {
		if out, err := runTool(t, manage, env, tt.args); err == nil || !strings.Contains(err.Error(), tt.errHas) {
			t.Errorf("%s: %s %v, want %q", tt.args, out, err, tt.errHas)
		}
	}
}
