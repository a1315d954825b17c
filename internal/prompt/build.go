package prompt

import (
	"cmp"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/talaria-agent/talaria/internal/injection"
)

// ErrUnreadable: a prompt file exists but could not be read. Build wraps it
// together with the underlying error.
var ErrUnreadable = errors.New("unreadable prompt file")

// Inputs are everything Build depends on besides the files it reads.
type Inputs struct {
	// Home is $TALARIA_HOME; empty means there are no home files (the
	// default identity, no memory, no skills).
	Home string
	// Workdir is the user's working directory; empty means no project
	// context is searched.
	Workdir  string
	Model    string
	Provider string // e.g. the endpoint host
	// Now is the current time; the date line shows it in UTC.
	Now time.Time
	// ToolGuidance are the offered tools' sentences of tool-use guidance,
	// in order (tools.Guidance); none when no tool is offered.
	ToolGuidance []string
	// Logger receives a warning for each refused file or memory entry;
	// nil means slog.Default().
	Logger *slog.Logger
}

// Prompt is a built system prompt.
type Prompt struct {
	Text     string
	Sections []Section
	// Refused lists what was left out because it looks like a prompt
	// injection, in prompt order.
	Refused []Refusal
	// Unread lists prompt files that exist but could not be read (a
	// directory, a FIFO, no permission), in prompt order: SOUL.md, the
	// memory files, the skills directory or a SKILL.md, project context
	// files. Each is left out, said in one line in the prompt and logged
	// as a warning; SOUL.md gives way to the default identity, and the
	// search for a context file goes on past it.
	Unread []Unread
}

// Refusal is a project context file or a memory entry left out of the
// prompt because it looks like a prompt injection.
type Refusal struct {
	Path string // the file
	// Entry is the 1-based number of the memory entry in Path; 0 when the
	// whole file was refused.
	Entry    int
	Findings []injection.Finding
}

// Section is one named part of a prompt.
type Section struct{ Name, Text string }

// Section names, in prompt order.
const (
	SectionIdentity = "identity"
	SectionMemory   = "memory"
	SectionSkills   = "skills"
	SectionContext  = "project context"
	SectionTools    = "tool use"
	SectionDate     = "date"
)

// Build assembles the system prompt from in and the files under in.Home
// and around in.Workdir.
func Build(in Inputs) (Prompt, error) {
	identity, identityUnread, identityRefused := identitySection(in.Home)
	memory, memoryRefused, memoryUnread := memorySection(in.Home)
	skills, skillsUnread, skillsRefused := skillsSection(in.Home)
	project, projectRefused, projectUnread, err := contextSection(in.Workdir)
	if err != nil {
		return Prompt{}, err
	}
	unread := append(append(append(identityUnread, memoryUnread...), skillsUnread...), projectUnread...)
	parts := []Section{
		{SectionIdentity, identity},
		{SectionMemory, memory},
		{SectionSkills, skills},
		{SectionContext, project},
		{SectionTools, toolGuidance(in.ToolGuidance)},
		{SectionDate, dateLine(in)},
	}
	p := assemble(parts)
	p.Refused = append(append(append(identityRefused, memoryRefused...), skillsRefused...), projectRefused...)
	p.Unread = unread
	warnRefused(in.Logger, p.Refused)
	warnUnread(in.Logger, p.Unread)
	return p, nil
}

// warnUnread logs a warning naming each prompt file left out because it
// could not be read, and why.
func warnUnread(log *slog.Logger, unread []Unread) {
	log = cmp.Or(log, slog.Default())
	for _, u := range unread {
		log.Warn("prompt file not loaded into the system prompt: it could not be read", "file", u.Path, "error", u.Err)
	}
}

// warnRefused logs a warning naming each refused file or entry and what
// was found in it.
func warnRefused(log *slog.Logger, refused []Refusal) {
	log = cmp.Or(log, slog.Default())
	for _, r := range refused {
		if r.Entry == 0 {
			log.Warn("context file not loaded into the system prompt: it looks like a prompt injection",
				"file", r.Path, "findings", injection.Details(r.Findings))
			continue
		}
		log.Warn("memory entry left out of the system prompt: it looks like a prompt injection",
			"file", r.Path, "entry", r.Entry, "findings", injection.Details(r.Findings))
	}
}

// assemble drops empty sections and joins the rest with blank lines.
func assemble(parts []Section) Prompt {
	var p Prompt
	texts := make([]string, 0, len(parts))
	for _, s := range parts {
		s.Text = strings.TrimSpace(s.Text)
		if s.Text == "" {
			continue
		}
		p.Sections = append(p.Sections, s)
		texts = append(texts, s.Text)
	}
	p.Text = strings.Join(texts, "\n\n")
	return p
}
