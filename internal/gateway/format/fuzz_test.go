package format

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// assertSplit checks Split's guarantees for one input: every part within
// the limit, non-empty and valid for its flavour, and the parts together
// showing the same text as the whole rendering, whitespace aside.
func assertSplit(t *testing.T, md string, limit int, f Flavour) []string {
	t.Helper()
	check := checker(f)
	whole := Render(md, f)
	wv, err := check(whole)
	if err != nil {
		t.Fatalf("%v: whole rendering invalid: %v\ninput: %q\noutput: %q", f, err, md, whole)
	}
	parts := Split(md, limit, f)
	if limit <= 0 {
		limit = f.Limit()
	}
	var got strings.Builder
	for i, p := range parts {
		if !utf8.ValidString(p) {
			t.Fatalf("%v: part %d is not valid UTF-8: %q", f, i, p)
		}
		if n := units(p); n > max(limit, MinLimit) {
			t.Fatalf("%v: part %d is %d units, limit %d: %q", f, i, n, limit, p)
		}
		if strings.Trim(p, " \t\n") == "" {
			t.Fatalf("%v: part %d is blank", f, i)
		}
		v, err := check(p)
		if err != nil {
			t.Fatalf("%v: part %d invalid: %v\ninput: %q\npart: %q", f, i, err, md, p)
		}
		got.WriteString(v)
	}
	if f != FlavourPlain && squeeze(got.String()) != squeeze(wv) {
		t.Fatalf("%v: split lost text\ninput: %q\nwhole: %q\nparts: %q", f, md, wv, got.String())
	}
	return parts
}

var fuzzSeeds = []string{
	"",
	"hello",
	"# Title\n\nSome **bold _it_** and `code` [link](http://x.y/a_(b)\\)) <!channel>",
	"```go\nfunc main() {\n\tfmt.Println(\"`\\\\`\")\n}\n```",
	"> quote **bold**\n> more\n\n- a\n- b\n  1. c",
	"| a | b |\n|---|---|\n| 1 | 2 |",
	"[x](javascript:alert(1)) ![i](https://e/x.png) <b>raw</b> &amp; &lt;",
	"**unbalanced *markup _here",
	"emoji 👍🏽 👨‍👩‍👧 CJK 漢字かな RTL שלום مرحبا \x00\x01\x7f\u0085",
	strings.Repeat("word ", 300),
	strings.Repeat("x", 2000),
	"````\n```\n````",
	"`` ` `` ```` `` ````",
	"*a*_b_ __c__ ~~d~~ ***e***",
	"[a **b** `c`](https://x/y\\z) https://example.com/p?q=1&r=<2>",
}

func fuzzSplit(f *testing.F, fl Flavour) {
	for _, s := range fuzzSeeds {
		f.Add(s, uint16(64))
		f.Add(s, uint16(17))
	}
	f.Fuzz(func(t *testing.T, md string, limit uint16) {
		if len(md) > 1<<14 {
			return
		}
		// A slow input is a finding too: crash so the engine keeps it.
		slow := time.AfterFunc(10*time.Second, func() { panic(fmt.Sprintf("slow input: %q, limit %d", md, limit)) })
		defer slow.Stop()
		assertSplit(t, md, int(limit%2048), fl)
	})
}

func FuzzTelegramHTMLSplit(f *testing.F) { fuzzSplit(f, FlavourTelegramHTML) }

func FuzzSlackSplit(f *testing.F) { fuzzSplit(f, FlavourSlack) }

func FuzzPlainSplit(f *testing.F) { fuzzSplit(f, FlavourPlain) }
