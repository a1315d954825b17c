// Package skills keeps the agent's procedural memory: one directory per
// skill under $TALARIA_HOME/skills, holding a SKILL.md (YAML front matter
// with name, description and version, then the instructions, in the
// agentskills.io layout) and supporting files. The system prompt lists
// the skills (internal/prompt); the skills tools and `talaria skills`
// read and change them through this package, which validates every write
// and scans it as context files are scanned, since a skill reaches the
// prompt of every session.
package skills
