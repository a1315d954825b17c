package fakellm

// This file simulates Anthropic prompt caching, so that the cache figures
// a client measures against the fake mean something: the prefixes that
// cache_control breakpoints mark are remembered, and a later request that
// repeats one reads it from the cache. It also signs and checks the
// thinking blocks the fake writes, and lists a request's breakpoints for
// tests.

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
)

// minCacheTokens is the shortest prefix that is cached, as with the real
// API: a breakpoint that marks fewer tokens is ignored.
const minCacheTokens = 1024

// cachePrefix is the prefix of a request up to one breakpoint.
type cachePrefix struct {
	hash   string
	tokens int
}

// promptCache remembers the cached prefixes of one server.
type promptCache struct {
	mu       sync.Mutex
	prefixes map[string]int // hash → tokens
}

// cacheUse is what one request reads from and writes to the cache.
type cacheUse struct {
	read, write int
}

// use looks a request's breakpoint prefixes up and remembers them: read
// is the longest remembered one, write what the last one adds to it.
func (c *promptCache) use(prefixes []cachePrefix) cacheUse {
	var eligible []cachePrefix
	for _, p := range prefixes {
		if p.tokens >= minCacheTokens {
			eligible = append(eligible, p)
		}
	}
	if len(eligible) == 0 {
		return cacheUse{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var u cacheUse
	for _, p := range eligible {
		if tokens, ok := c.prefixes[p.hash]; ok && tokens > u.read {
			u.read = tokens
		}
	}
	u.write = max(0, eligible[len(eligible)-1].tokens-u.read)
	for _, p := range eligible {
		c.prefixes[p.hash] = p.tokens
	}
	return u
}

// cachePrefixes lists the prefix each breakpoint of a request marks, in
// the cache's order: tools, system, messages. A prefix is identified by a
// hash of the model and its blocks in canonical JSON (cache_control left
// out) and measured in estimated tokens.
func cachePrefixes(p *antParsed) ([]cachePrefix, error) {
	h := sha256.New()
	size := 0
	var out []cachePrefix
	add := func(kind string, raw json.RawMessage, cc json.RawMessage) error {
		canon, err := canonicalBlock(raw)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s:%d:", kind, len(canon))
		h.Write(canon)
		size += len(canon)
		if cached(cc) {
			out = append(out, cachePrefix{hash: hex.EncodeToString(h.Sum(nil)), tokens: estimateTokens(size)})
		}
		return nil
	}
	fmt.Fprintf(h, "model:%s;", p.req.Model)
	for i, t := range p.tools {
		if err := add("tool", t.raw, t.CacheControl); err != nil {
			return nil, fmt.Errorf("tools.%d: %w", i, err)
		}
	}
	for i, b := range p.system {
		if err := add("system", b.raw, b.CacheControl); err != nil {
			return nil, fmt.Errorf("system.%d: %w", i, err)
		}
	}
	for i, m := range p.messages {
		fmt.Fprintf(h, "message:%s;", m.role)
		for j, b := range m.blocks {
			if err := add("block", b.raw, b.CacheControl); err != nil {
				return nil, fmt.Errorf("messages.%d.content.%d: %w", i, j, err)
			}
		}
	}
	return out, nil
}

// canonicalBlock is a block's JSON with its keys sorted and without its
// cache_control, so that the same content hashes the same however it was
// written.
func canonicalBlock(raw json.RawMessage) ([]byte, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	if obj, ok := v.(map[string]any); ok {
		delete(obj, "cache_control")
	}
	return json.Marshal(v)
}

// signer signs the thinking blocks of one server with its own secret.
type signer struct{ secret []byte }

// sign is the signature of a thinking text.
func (s signer) sign(thinking string) string {
	mac := hmac.New(sha256.New, s.secret)
	mac.Write([]byte("thinking\x00" + thinking))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// verify reports whether signature is the server's for thinking.
func (s signer) verify(thinking, signature string) bool {
	got, err := base64.StdEncoding.DecodeString(signature)
	if err != nil {
		return false
	}
	want, err := base64.StdEncoding.DecodeString(s.sign(thinking))
	return err == nil && hmac.Equal(got, want)
}

// CacheBreakpoints lists where an Anthropic request puts its prompt cache
// breakpoints (the blocks with cache_control), in the request's own
// paths: "tools.0", "system.1", "messages.3.content.0". It is nil for
// another wire format or a body that does not read.
func (r Request) CacheBreakpoints() []string {
	if r.Wire != WireAnthropic {
		return nil
	}
	p, err := parseAnthropic(r.Raw)
	if err != nil {
		return nil
	}
	var out []string
	for i, t := range p.tools {
		if cached(t.CacheControl) {
			out = append(out, fmt.Sprintf("tools.%d", i))
		}
	}
	for i, b := range p.system {
		if cached(b.CacheControl) {
			out = append(out, fmt.Sprintf("system.%d", i))
		}
	}
	for i, m := range p.messages {
		for j, b := range m.blocks {
			if cached(b.CacheControl) {
				out = append(out, fmt.Sprintf("messages.%d.content.%d", i, j))
			}
		}
	}
	return out
}
