// Package injection recognises prompt-injection markers in text that is
// about to enter a system prompt: project context files (.talaria.md,
// AGENTS.md, ...) and memory entries.
//
// [Scan] is a pure function. It looks for four kinds of marker:
//
//   - invisible Unicode: zero-width characters (U+200B..U+200F), bidi
//     embeddings, overrides and isolates (U+202A..U+202E,
//     U+2066..U+2069), invisible operators (U+2060..U+2064), a byte order
//     mark after the first character (U+FEFF) and tag characters
//     (U+E0000..U+E007F), which can carry text a reader never sees. The
//     joiners inside emoji and between letters of scripts that need them,
//     and the tag characters of a flag emoji, are allowed;
//   - instruction overrides: "ignore all previous instructions",
//     "disregard your rules", "you are now an unrestricted ...", "system
//     prompt override", "do not tell the user", "new instructions:",
//     chat-template tokens such as <|im_start|>, and the like;
//   - hidden HTML: a comment (<!-- ... -->) that holds an override, a
//     request to ignore or bypass something, an order to an AI agent, or an
//     exfiltration lure; and elements hidden with display:none;
//   - exfiltration lures: a network command (curl, wget, nc, ...) that
//     carries a secret-looking variable ($API_KEY, ${GITHUB_TOKEN}), the
//     environment piped into one, or a command that reads a private key or
//     credentials file (~/.ssh/id_rsa, ~/.aws/credentials, ~/.netrc).
//
// The rules are deliberately narrow: ordinary prose ("ignore files in
// .gitignore"), ordinary HTML comments (<!-- TODO: fix layout -->,
// <!-- prettier-ignore -->) and public keys (id_rsa.pub) do not match. A
// match means the text is refused as a whole; callers say so visibly.
package injection
