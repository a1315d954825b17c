package format

import (
	"fmt"
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	t.Parallel()
	code := "```python\n" + strings.Repeat("print('line')  # `x` \\ <y>\n", 40) + "```"
	cases := []struct {
		name  string
		in    string
		limit int
		flav  []Flavour
		check func(t *testing.T, f Flavour, parts []string)
	}{
		{
			name: "code block across a boundary keeps its language", in: "intro\n\n" + code + "\n\nafter", limit: 300,
			flav: []Flavour{FlavourTelegramHTML, FlavourSlack},
			check: func(t *testing.T, f Flavour, parts []string) {
				if len(parts) < 3 {
					t.Fatalf("want several parts, got %q", parts)
				}
				open := map[Flavour]string{FlavourTelegramHTML: `<pre><code class="language-python">`, FlavourSlack: "```"}[f]
				for _, p := range parts[1 : len(parts)-1] {
					if !strings.HasPrefix(p, open) {
						t.Errorf("middle part does not reopen the block: %q", p)
					}
				}
			},
		},
		{
			name: "long paragraph breaks at spaces", in: strings.Repeat("lorem ipsum dolor ", 400), limit: 500,
			flav: []Flavour{FlavourTelegramHTML, FlavourSlack, FlavourPlain},
			check: func(t *testing.T, f Flavour, parts []string) {
				for _, p := range parts {
					if !strings.HasSuffix(p, "lorem") && !strings.HasSuffix(p, "ipsum") && !strings.HasSuffix(p, "dolor") {
						t.Errorf("part broken inside a word: ...%q", p[max(0, len(p)-20):])
					}
				}
			},
		},
		{
			name: "paragraph boundary preferred", in: strings.Repeat("a", 200) + " b\n\n" + strings.Repeat("c ", 50), limit: 260,
			flav: []Flavour{FlavourTelegramHTML, FlavourPlain},
			check: func(t *testing.T, f Flavour, parts []string) {
				if len(parts) != 2 || !strings.HasSuffix(parts[0], " b") {
					t.Errorf("want a break at the paragraph, got %q", parts)
				}
			},
		},
		{
			name: "single huge word is hard split", in: strings.Repeat("x", 10000), limit: TelegramLimit,
			flav: []Flavour{FlavourTelegramHTML, FlavourSlack},
			check: func(t *testing.T, f Flavour, parts []string) {
				if len(parts) != 3 || len(parts[0]) != TelegramLimit {
					t.Errorf("want 3 parts, the first full: %d parts, first %d", len(parts), len(parts[0]))
				}
			},
		},
		{
			name: "bold across a hard split is closed and reopened", in: "**" + strings.Repeat("y", 100) + "**", limit: 40,
			flav: []Flavour{FlavourTelegramHTML, FlavourSlack},
			check: func(t *testing.T, f Flavour, parts []string) {
				open := map[Flavour]string{FlavourTelegramHTML: "<b>", FlavourSlack: "*"}[f]
				for _, p := range parts {
					if !strings.HasPrefix(p, open) {
						t.Errorf("part not bold: %q", p)
					}
				}
			},
		},
		{
			name: "exact limit is one part", in: strings.Repeat("z", TelegramLimit), limit: TelegramLimit,
			flav: []Flavour{FlavourTelegramHTML, FlavourPlain},
			check: func(t *testing.T, f Flavour, parts []string) {
				if len(parts) != 1 {
					t.Errorf("want 1 part, got %d", len(parts))
				}
			},
		},
		{
			name: "one over the limit is two parts", in: strings.Repeat("z", TelegramLimit+1), limit: TelegramLimit,
			flav: []Flavour{FlavourTelegramHTML, FlavourPlain},
			check: func(t *testing.T, f Flavour, parts []string) {
				if len(parts) != 2 || len(parts[1]) != 1 {
					t.Errorf("want 4096+1, got %d parts", len(parts))
				}
			},
		},
		{
			name: "escapes count against the limit", in: strings.Repeat("&", 100), limit: 52,
			flav: []Flavour{FlavourTelegramHTML, FlavourSlack},
			check: func(t *testing.T, f Flavour, parts []string) {
				if len(parts) != 10 {
					t.Errorf("want 10 parts of 10 &amp;, got %d", len(parts))
				}
			},
		},
		{
			name: "astral characters count two units", in: strings.Repeat("😀", 30), limit: 20,
			flav: []Flavour{FlavourTelegramHTML, FlavourPlain},
			check: func(t *testing.T, f Flavour, parts []string) {
				if len(parts) != 3 || parts[0] != strings.Repeat("😀", 10) {
					t.Errorf("want 3 parts of 10 emoji, got %q", parts)
				}
			},
		},
		{
			name: "no break inside a grapheme", in: strings.Repeat("e\u0301", 20) + strings.Repeat("👨\u200d👩", 10), limit: 17,
			flav: []Flavour{FlavourTelegramHTML, FlavourPlain},
			check: func(t *testing.T, f Flavour, parts []string) {
				for _, p := range parts {
					if strings.HasPrefix(p, "\u0301") || strings.HasPrefix(p, "\u200d") || strings.HasSuffix(p, "\u200d") {
						t.Errorf("part splits a grapheme: %q", p)
					}
				}
			},
		},
		{
			name: "link longer than the limit becomes text", in: "[label text](https://example.com/" + strings.Repeat("p", 100) + ")", limit: 50,
			flav: []Flavour{FlavourTelegramHTML, FlavourSlack},
			check: func(t *testing.T, f Flavour, parts []string) {
				if len(parts) != 1 || parts[0] != "label text" {
					t.Errorf("want the label as text, got %q", parts)
				}
			},
		},
		{
			name: "quote continues with its marker", in: "> " + strings.Repeat("q ", 60), limit: 40,
			flav: []Flavour{FlavourTelegramHTML, FlavourSlack},
			check: func(t *testing.T, f Flavour, parts []string) {
				open := map[Flavour]string{FlavourTelegramHTML: "<blockquote>", FlavourSlack: "> "}[f]
				for _, p := range parts {
					if !strings.HasPrefix(p, open) {
						t.Errorf("part not quoted: %q", p)
					}
				}
			},
		},
		{
			name: "blank input has no parts", in: " \n\n\t \x00 ", limit: 100,
			flav: []Flavour{FlavourTelegramHTML, FlavourSlack, FlavourPlain},
			check: func(t *testing.T, f Flavour, parts []string) {
				if len(parts) != 0 {
					t.Errorf("want no parts, got %q", parts)
				}
			},
		},
	}
	for _, c := range cases {
		for _, f := range c.flav {
			t.Run(fmt.Sprintf("%s/%d", c.name, f), func(t *testing.T) {
				c.check(t, f, assertSplit(t, c.in, c.limit, f))
			})
		}
	}
}

func TestSplitSmallLimit(t *testing.T) {
	t.Parallel()
	for _, f := range []Flavour{FlavourTelegramHTML, FlavourSlack} {
		parts := Split("**&&&&** [a](https://b.c/d) `x`", 1, f)
		for _, p := range parts {
			if units(p) > MinLimit {
				t.Errorf("%v: part over MinLimit: %q", f, p)
			}
		}
	}
}
