package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/internal/skills"
)

const skillsListDescription = `List your skills: procedures saved for particular kinds of task, each with a name, a one-line description of when to use it, a version and its supporting files. ` +
	`Read one with skill_view before a task it matches. The result is JSON: {"skills": [{"name","description","version","files"}]}.`

const skillViewDescription = `Read a skill: its SKILL.md (front matter, then the instructions), or with file one of its supporting files (e.g. references/api.md). ` +
	`The result is JSON: {"name", "file", "content", "files"}.`

const skillManageDescription = `Create and maintain your skills under $TALARIA_HOME/skills, so a procedure that worked is reused in later sessions. ` +
	`action "create" {name, content}: content is the whole SKILL.md: "---", "name: <name>", "description: <when to use it, one line>", optionally "version: 1", "---", then the steps. ` +
	`"edit" {name, content} replaces SKILL.md; "patch" {name, old_string, new_string, file?} replaces text in SKILL.md or a supporting file; ` +
	`"write_file" {name, file, content} writes a supporting file (references/, templates/, scripts/, assets/); "delete" {name} removes the skill. ` +
	`Names are lower-case letters, digits, '.', '_' and '-'. Every write is checked (front matter, sizes) and scanned for hidden text or injected directives, since skills reach every session's prompt.`

const skillsListSchema = `{"type":"object","properties":{},"required":[],"additionalProperties":false}`

const skillViewSchema = `{"type":"object","properties":{` +
	`"name":{"type":"string","description":"The skill's name."},` +
	`"file":{"type":"string","description":"A supporting file to read instead of SKILL.md."}` +
	`},"required":["name"],"additionalProperties":false}`

const skillManageSchema = `{"type":"object","properties":{` +
	`"action":{"type":"string","enum":["create","edit","patch","write_file","delete"],"description":"What to do."},` +
	`"name":{"type":"string","description":"The skill's name."},` +
	`"content":{"type":"string","description":"create, edit: the whole SKILL.md; write_file: the file's content."},` +
	`"file":{"type":"string","description":"write_file, patch: a supporting file's path inside the skill."},` +
	`"old_string":{"type":"string","description":"patch: the exact text to replace."},` +
	`"new_string":{"type":"string","description":"patch: the text to put in its place."}` +
	`},"required":["action","name"],"additionalProperties":false}`

// SkillsListTool is the skills_list tool over Home's skills.
type SkillsListTool struct{ Home string }

// SkillViewTool is the skill_view tool over Home's skills.
type SkillViewTool struct{ Home string }

// SkillManageTool is the skill_manage tool over Home's skills.
type SkillManageTool struct{ Home string }

// Name implements Tool.
func (SkillsListTool) Name() string { return "skills_list" }

// Name implements Tool.
func (SkillViewTool) Name() string { return "skill_view" }

// Name implements Tool.
func (SkillManageTool) Name() string { return "skill_manage" }

// Idempotent implements Tool: listing reads only.
func (SkillsListTool) Idempotent() bool { return true }

// Idempotent implements Tool: viewing reads only.
func (SkillViewTool) Idempotent() bool { return true }

// Idempotent implements Tool: managing writes skills; a retry after a
// crash is answered "outcome unknown".
func (SkillManageTool) Idempotent() bool { return false }

// Quick implements QuickTool: a few small files.
func (SkillsListTool) Quick() bool { return true }

// Quick implements QuickTool: one small file.
func (SkillViewTool) Quick() bool { return true }

// Quick implements QuickTool: one small file.
func (SkillManageTool) Quick() bool { return true }

// Definition implements Tool.
func (t SkillsListTool) Definition() openai.Tool {
	return functionTool(t.Name(), skillsListDescription, skillsListSchema)
}

// Definition implements Tool.
func (t SkillViewTool) Definition() openai.Tool {
	return functionTool(t.Name(), skillViewDescription, skillViewSchema)
}

// Definition implements Tool.
func (t SkillManageTool) Definition() openai.Tool {
	return functionTool(t.Name(), skillManageDescription, skillManageSchema)
}

// skillsHome is the home the skills live in: the tool's, else the policy's.
func skillsHome(home string, env Env) string {
	if home != "" {
		return home
	}
	return env.Policy.talariaHome()
}

// Run implements Tool.
func (t SkillsListTool) Run(_ context.Context, env Env, raw json.RawMessage) (string, error) {
	if _, err := parseArgs(t.Name(), raw); err != nil {
		return "", err
	}
	list, err := skills.List(skillsHome(t.Home, env))
	if err != nil {
		return "", err
	}
	if list == nil {
		list = []skills.Skill{}
	}
	return marshalResult(map[string]any{"skills": list})
}

// Run implements Tool.
func (t SkillViewTool) Run(_ context.Context, env Env, raw json.RawMessage) (string, error) {
	a, err := parseArgs(t.Name(), raw)
	if err != nil {
		return "", err
	}
	name, err := a.requiredStr("name")
	if err != nil {
		return "", err
	}
	file, _, err := a.str("file")
	if err != nil {
		return "", err
	}
	home := skillsHome(t.Home, env)
	content, err := skills.Read(home, name, file)
	if err != nil {
		return "", fmt.Errorf("%s: %w", t.Name(), err)
	}
	s, err := skills.Load(home, name)
	if err != nil {
		return "", fmt.Errorf("%s: %w", t.Name(), err)
	}
	return marshalResult(map[string]any{"name": name, "file": orSkillFile(file), "content": content, "files": s.Files})
}

func orSkillFile(file string) string {
	if file == "" {
		return "SKILL.md"
	}
	return filepath.ToSlash(file)
}

// Run implements Tool.
func (t SkillManageTool) Run(ctx context.Context, env Env, raw json.RawMessage) (string, error) {
	a, err := parseArgs(t.Name(), raw)
	if err != nil {
		return "", err
	}
	action, err := a.requiredStr("action")
	if err != nil {
		return "", err
	}
	name, err := a.requiredStr("name")
	if err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("skill_manage: %w: %w", ErrCancelled, err)
	}
	home := skillsHome(t.Home, env)
	done, err := t.apply(home, a, action, name)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", t.Name(), action, err)
	}
	return marshalResult(map[string]string{"name": name, "action": action, "result": done})
}

// apply carries out one action and says what it did.
func (t SkillManageTool) apply(home string, a args, action, name string) (string, error) {
	switch action {
	case "create", "edit":
		content, err := a.requiredStr("content")
		if err != nil {
			return "", err
		}
		if action == "create" {
			_, err = skills.Create(home, name, content)
			return "created; it is listed in the system prompt of new sessions", err
		}
		_, err = skills.Replace(home, name, content)
		return "SKILL.md replaced", err
	case "write_file":
		file, err := a.requiredStr("file")
		if err != nil {
			return "", err
		}
		content, err := a.requiredStr("content")
		if err != nil {
			return "", err
		}
		return "wrote " + filepath.ToSlash(file), skills.WriteFile(home, name, file, content)
	case "patch":
		return t.patch(home, a, name)
	case "delete":
		return "deleted", skills.Delete(home, name)
	}
	return "", a.errorf(`"action" must be create, edit, patch, write_file or delete, got %q`, action)
}

// patch replaces text in SKILL.md or a supporting file, as the patch
// tool's replace mode does (one occurrence, whitespace-tolerant).
func (t SkillManageTool) patch(home string, a args, name string) (string, error) {
	old, err := a.requiredStr("old_string")
	if err != nil {
		return "", err
	}
	repl, err := a.requiredStr("new_string")
	if err != nil {
		return "", err
	}
	file, _, err := a.str("file")
	if err != nil {
		return "", err
	}
	if old == "" {
		return "", a.errorf(`"old_string" is empty`)
	}
	text, err := skills.Read(home, name, file)
	if err != nil {
		return "", err
	}
	after, _, _, applied, err := replaceIn(text, old, repl, false)
	switch {
	case err != nil:
		return "", err
	case applied:
		return "already applied", nil
	case file == "":
		_, err = skills.Replace(home, name, after)
	default:
		err = skills.WriteFile(home, name, file, after)
	}
	return "patched " + orSkillFile(file), err
}

// skills_list is a built-in tool.
var _ = builtin(func(s Services) Tool { return SkillsListTool{Home: s.Home} })

// Meta implements Described.
func (SkillsListTool) Meta() Meta {
	return Meta{
		Toolset: "skills",
	}
}

// skill_view is a built-in tool.
var _ = builtin(func(s Services) Tool { return SkillViewTool{Home: s.Home} })

// Meta implements Described.
func (SkillViewTool) Meta() Meta {
	return Meta{
		Toolset: "skills",
	}
}

// skill_manage is a built-in tool.
var _ = builtin(func(s Services) Tool { return SkillManageTool{Home: s.Home} })

// Meta implements Described.
func (SkillManageTool) Meta() Meta {
	return Meta{
		Toolset:  "skills",
		Approval: "writes checked and scanned",
	}
}
