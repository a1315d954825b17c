package tools

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/google/jsonschema-go/jsonschema"

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

// skillViewArgs are skill_view's arguments.
type skillViewArgs struct {
	Name string `json:"name" jsonschema:"The skill's name."`
	File string `json:"file,omitempty" jsonschema:"A supporting file to read instead of SKILL.md."`
}

// skillManageArgs are skill_manage's arguments; which of the optional ones
// an action needs, it checks.
type skillManageArgs struct {
	Action    string  `json:"action" jsonschema:"What to do."`
	Name      string  `json:"name" jsonschema:"The skill's name."`
	Content   *string `json:"content,omitempty" jsonschema:"create, edit: the whole SKILL.md; write_file: the file's content."`
	File      string  `json:"file,omitempty" jsonschema:"write_file, patch: a supporting file's path inside the skill."`
	OldString *string `json:"old_string,omitempty" jsonschema:"patch: the exact text to replace."`
	NewString *string `json:"new_string,omitempty" jsonschema:"patch: the text to put in its place."`
}

// skillActions are skill_manage's actions.
var skillActions = []any{"create", "edit", "patch", "write_file", "delete"}

// SkillsList is the skills_list tool over home's skills ("": the policy's
// home).
func SkillsList(home string) Tool {
	return Define(Spec[struct{}]{
		Name: "skills_list", Description: skillsListDescription, Meta: Meta{Toolset: "skills"},
		Quick: true, Idempotent: true,
		Run: func(_ context.Context, env Env, _ struct{}) (string, error) {
			list, err := skills.List(skillsHome(home, env))
			if err != nil {
				return "", err
			}
			if list == nil {
				list = []skills.Skill{}
			}
			return marshalResult(map[string]any{"skills": list})
		},
	})
}

// SkillView is the skill_view tool over home's skills.
func SkillView(home string) Tool {
	return Define(Spec[skillViewArgs]{
		Name: "skill_view", Description: skillViewDescription, Meta: Meta{Toolset: "skills"},
		Quick: true, Idempotent: true,
		Run: func(_ context.Context, env Env, a skillViewArgs) (string, error) {
			home := skillsHome(home, env)
			content, err := skills.Read(home, a.Name, a.File)
			if err != nil {
				return "", fmt.Errorf("skill_view: %w", err)
			}
			s, err := skills.Load(home, a.Name)
			if err != nil {
				return "", fmt.Errorf("skill_view: %w", err)
			}
			return marshalResult(map[string]any{"name": a.Name, "file": orSkillFile(a.File), "content": content, "files": s.Files})
		},
	})
}

// SkillManage is the skill_manage tool over home's skills. It writes
// skills, so a retry after a crash is answered "outcome unknown".
func SkillManage(home string) Tool {
	return Define(Spec[skillManageArgs]{
		Name: "skill_manage", Description: skillManageDescription,
		Meta:  Meta{Toolset: "skills", Approval: "writes checked and scanned"},
		Quick: true,
		Schema: func(s *jsonschema.Schema) {
			s.Properties["action"].Enum = skillActions
		},
		Run: func(ctx context.Context, env Env, a skillManageArgs) (string, error) {
			if err := ctx.Err(); err != nil {
				return "", fmt.Errorf("skill_manage: %w: %w", ErrCancelled, err)
			}
			done, err := manageSkill(skillsHome(home, env), a)
			if err != nil {
				return "", fmt.Errorf("skill_manage %s: %w", a.Action, err)
			}
			return marshalResult(map[string]string{"name": a.Name, "action": a.Action, "result": done})
		},
	})
}

var (
	_ = builtin(func(s Services) Tool { return SkillsList(s.Home) })
	_ = builtin(func(s Services) Tool { return SkillView(s.Home) })
	_ = builtin(func(s Services) Tool { return SkillManage(s.Home) })
)

// skillsHome is the home the skills live in: the tool's, else the policy's.
func skillsHome(home string, env Env) string {
	if home != "" {
		return home
	}
	return env.Policy.talariaHome()
}

func orSkillFile(file string) string {
	if file == "" {
		return "SKILL.md"
	}
	return filepath.ToSlash(file)
}

// required is an optional argument an action needs.
func required(name string, v *string) (string, error) {
	if v == nil {
		return "", fmt.Errorf("%w for skill_manage: missing required argument %q", ErrInvalidArguments, name)
	}
	return *v, nil
}

// manageSkill carries out one action and says what it did.
func manageSkill(home string, a skillManageArgs) (string, error) {
	switch a.Action {
	case "create", "edit":
		content, err := required("content", a.Content)
		if err != nil {
			return "", err
		}
		if a.Action == "create" {
			_, err = skills.Create(home, a.Name, content)
			return "created; it is listed in the system prompt of new sessions", err
		}
		_, err = skills.Replace(home, a.Name, content)
		return "SKILL.md replaced", err
	case "write_file":
		if a.File == "" {
			return "", fmt.Errorf("%w for skill_manage: missing required argument %q", ErrInvalidArguments, "file")
		}
		content, err := required("content", a.Content)
		if err != nil {
			return "", err
		}
		return "wrote " + filepath.ToSlash(a.File), skills.WriteFile(home, a.Name, a.File, content)
	case "patch":
		return patchSkill(home, a)
	case "delete":
		return "deleted", skills.Delete(home, a.Name)
	}
	return "", fmt.Errorf("%w for skill_manage: \"action\" must be create, edit, patch, write_file or delete, got %q", ErrInvalidArguments, a.Action)
}

// patchSkill replaces text in SKILL.md or a supporting file, as the patch
// tool's replace mode does (one occurrence, whitespace-tolerant).
func patchSkill(home string, a skillManageArgs) (string, error) {
	old, err := required("old_string", a.OldString)
	if err != nil {
		return "", err
	}
	repl, err := required("new_string", a.NewString)
	if err != nil {
		return "", err
	}
	if old == "" {
		return "", fmt.Errorf("%w for skill_manage: \"old_string\" is empty", ErrInvalidArguments)
	}
	text, err := skills.Read(home, a.Name, a.File)
	if err != nil {
		return "", err
	}
	after, _, _, applied, err := replaceIn(text, old, repl, false)
	switch {
	case err != nil:
		return "", err
	case applied:
		return "already applied", nil
	case a.File == "":
		_, err = skills.Replace(home, a.Name, after)
	default:
		err = skills.WriteFile(home, a.Name, a.File, after)
	}
	return "patched " + orSkillFile(a.File), err
}
