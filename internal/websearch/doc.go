// Package websearch is web_search's backends: a [Backend] searches the web
// and returns titles, addresses and snippets, whatever service answers.
// [SearXNG] (a self-hosted instance's JSON API), [Brave], [Tavily] and
// [Exa] speak each service's HTTP API; [FromConfig] picks the one the
// configuration names or the first it has a key for.
//
// Every failure is one line naming the service: a refused key (401/403)
// says which key to check, a rate limit (429) says when to retry from its
// Retry-After, a server error gives its status, and an answer that is not
// the service's JSON says so. Answers are read up to a bound, and a search
// has a deadline.
package websearch
