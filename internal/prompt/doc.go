// Package prompt builds Talaria's system prompt.
//
// [Build] is a pure function of its [Inputs] and of the files it reads:
// the same inputs and the same files always give the same bytes. The
// prompt is stored once per session and sent unchanged on every model
// call, so providers can cache it.
//
// The prompt is made of sections, in this order, joined by blank lines:
//
//  1. identity: $TALARIA_HOME/SOUL.md, or a default identity;
//  2. memory: $TALARIA_HOME/memories/MEMORY.md (the agent's notes) and
//     USER.md (facts about the user), each held to a character cap by
//     keeping whole entries from the start;
//  3. skills: an index of $TALARIA_HOME/skills/*/SKILL.md;
//  4. project context: the nearest .talaria.md or TALARIA.md from the
//     working directory up to its git root (the working directory alone
//     when it is in no git repository), else AGENTS.md, CLAUDE.md or
//     .cursorrules in the working directory, capped at [ContextCap]
//     characters;
//  5. tool-use guidance for the tools offered;
//  6. the date line: date, model, provider and working directory.
//
// A section with nothing to say is left out, except identity and the date
// line. A missing file is not an error. A prompt file that exists but
// cannot be read (a directory, a FIFO, no permission) is skipped: the
// prompt says so in one line in its section ("[AGENTS.md was not loaded:
// it could not be read]"; home files are named relative to the home, e.g.
// "memories/MEMORY.md", "skills/x/SKILL.md"), [Prompt.Unread] lists it
// (its error wrapping [ErrUnreadable] and the cause) and it is logged as a
// warning, so neither the home nor a working directory ever stops a turn
// from starting. An unreadable SOUL.md gives the default identity; the
// search for a project context file goes on past an unreadable one.
//
// Project context files and memory entries are scanned with
// [injection.Scan] before they enter the prompt. A context file that looks
// like a prompt injection is replaced by a one-line note ("[AGENTS.md was
// not loaded: it looks like a prompt injection (...)]"); such a memory
// entry is left out and counted in a note. Each refusal is listed in
// [Prompt.Refused] and logged as a warning naming the file and the
// finding.
//
// Memory files hold entries separated by a line containing only "§".
// [SplitEntries], [FormatEntries], [MemoryCap] and [UserCap] are shared
// with the memory tool, which writes these files, so that the tool and the
// prompt agree on what fits.
package prompt
