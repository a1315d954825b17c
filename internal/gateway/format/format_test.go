package format

import (
	"fmt"
	"strings"
	"testing"
)

type convCase struct {
	name, in, want string
}

func runConv(t *testing.T, f Flavour, cases []convCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Render(c.in, f)
			if got != c.want {
				t.Errorf("Render(%q, %v)\n got %q\nwant %q", c.in, f, got, c.want)
			}
			if _, err := checker(f)(got); err != nil {
				t.Errorf("invalid %v output %q: %v", f, got, err)
			}
		})
	}
}

func TestTelegramHTML(t *testing.T) {
	t.Parallel()
	runConv(t, FlavourTelegramHTML, []convCase{
		{"heading", "# Title\n\ntext", "<b>Title</b>\n\ntext"},
		{"nested emphasis", "**bold _it_ ~~st~~**", "<b>bold <i>it</i> <s>st</s></b>"},
		{"triple emphasis", "***both***", "<b><i>both</i></b>"},
		{"code with backticks and backslash", "`` a`b\\c ``", "<code>a`b\\c</code>"},
		{"fenced code with language", "```go\nif a < b && c > d {}\n```", `<pre><code class="language-go">if a &lt; b &amp;&amp; c &gt; d {}</code></pre>`},
		{"fenced code bad language", "```a\"><script>\nx\n```", "<pre>x</pre>"},
		{"link with paren and backslash", `[t](<https://x.y/a)b\\c>)`, `<a href="https://x.y/a)b%5Cc">t</a>`},
		{"link with quote", `[t](https://x.y/"a"&b)`, `<a href="https://x.y/%22a%22&amp;b">t</a>`},
		{"javascript link", "[click](javascript:alert(1))", "click"},
		{"tg link", "[me](tg://user?id=1)", `<a href="tg://user?id=1">me</a>`},
		{"bare URL", "see https://example.com/a_b.", `see <a href="https://example.com/a_b">https://example.com/a_b</a>.`},
		{"image", "![cat](https://e.x/cat.png)", `<a href="https://e.x/cat.png">cat</a>`},
		{"raw HTML", "<b>x</b> <script>alert(1)</script>", "&lt;b&gt;x&lt;/b&gt; &lt;script&gt;alert(1)&lt;/script&gt;"},
		{"html block", "<div>\n<i>x</i>\n</div>", "&lt;div&gt;\n&lt;i&gt;x&lt;/i&gt;\n&lt;/div&gt;"},
		{"entities", "a &amp; b &lt; c &copy; \"q\"", "a &amp; b &lt; c © \"q\""},
		{"lists", "- a\n- b\n\n1. x\n2. y", "• a\n• b\n\n1. x\n2. y"},
		{"nested list", "- a\n  - b", "• a\n  • b"},
		{"quote", "> q **b**\n> r", "<blockquote>q <b>b</b>\nr</blockquote>"},
		{"table", "| a | bb |\n|---|---|\n| ccc | d |", "<pre>a   | bb\n----+---\nccc | d</pre>"},
		{"emoji CJK RTL", "👍🏽 漢字 שלום مرحبا", "👍🏽 漢字 שלום مرحبا"},
		{"control characters", "a\x00b\x1bc\x7fd\r\ne\u0085f", "abcd\nef"},
		{"invalid UTF-8", "a\xffb", "a\uFFFDb"},
		{"link containing code", "[`x`](https://a.b)", `<a href="https://a.b">x</a>`},
		{"unbalanced", "**open *and `tick", "**open *and `tick"},
	})
}

func TestSlackMrkdwn(t *testing.T) {
	t.Parallel()
	runConv(t, FlavourSlack, []convCase{
		{"heading", "# Title", "*Title*"},
		{"emphasis", "**b** _i_ ~~s~~", "*b* _i_ ~s~"},
		{"mentions cannot be forged", "<!channel> <@U123> <#C1|x> <!here>", "&lt;!channel&gt; &lt;@U123&gt; &lt;#C1|x&gt; &lt;!here&gt;"},
		{"ampersand", "a & b &amp; c", "a &amp; b &amp; c"},
		{"link", "[a > b](https://x.y/?a=1&b=2|3)", "<https://x.y/?a=1&amp;b=2%7C3|a &gt; b>"},
		{"link drops inner style", "[**b**](https://x.y)", "<https://x.y|b>"},
		{"javascript link", "[c](javascript:alert(1))", "c"},
		{"tg link is text", "[me](tg://user?id=1)", "me"},
		{"code with backticks", "`` a`b ``", "`aˋb`"},
		{"fenced code with fence inside", "````\n```\nx\n````", "```\u200b`\u200b`\u200b`\nx```"},
		{"backticks in text", "a ``` b", "a `\u200b`\u200b` b"},
		{"quote", "> a\n> b", "> a\n> b"},
		{"list", "- a\n- b", "• a\n• b"},
		{"raw HTML", "<b>x</b>", "&lt;b&gt;x&lt;/b&gt;"},
		{"emoji CJK RTL", "👍 漢字 שלום", "👍 漢字 שלום"},
	})
}

func TestPlain(t *testing.T) {
	t.Parallel()
	runConv(t, FlavourPlain, []convCase{
		{"formatting dropped", "# T\n\n**b** _i_ `c`", "T\n\nb i c"},
		{"link", "[site](https://x.y) and https://z.w", "site (https://x.y) and https://z.w"},
		{"code block", "```\na <b>\n```", "a <b>"},
		{"javascript link", "[c](javascript:x)", "c"},
	})
}

// hugeInputs are a deeply nested document and a 1 MB paragraph of many
// lines.
func hugeInputs() (deep, long string) {
	return strings.Repeat("> "+strings.Repeat("- ", 50)+"**x** [l](https://a.b)\n", 2000),
		strings.Repeat("a *word* &\n", 100000)
}

// TestHugeInput: huge inputs convert and split into valid parts. How long
// that takes is BenchmarkHugeInput's to measure, not a test's to assert.
func TestHugeInput(t *testing.T) {
	t.Parallel()
	deep, long := hugeInputs()
	for _, f := range []Flavour{FlavourTelegramHTML, FlavourSlack} {
		assertSplit(t, deep, f.Limit(), f)
		assertSplit(t, long, f.Limit(), f)
	}
}

func BenchmarkHugeInput(b *testing.B) {
	deep, long := hugeInputs()
	for _, f := range []Flavour{FlavourTelegramHTML, FlavourSlack} {
		b.Run(fmt.Sprint(f), func(b *testing.B) {
			for b.Loop() {
				Render(deep, f)
				Split(deep, f.Limit(), f)
				Split(long, f.Limit(), f)
			}
		})
	}
}

func TestWhatsApp(t *testing.T) {
	t.Parallel()
	runConv(t, FlavourWhatsApp, []convCase{
		{"emphasis", "**bold** _it_ ~~st~~", "*bold* _it_ ~st~"},
		{"nothing escaped", "a & b < c > d", "a & b < c > d"},
		{"link as text and url", "see [the docs](https://e.com/d)", "see the docs (https://e.com/d)"},
		{"bold link keeps its bold", "**[docs](https://e.com)**", "*docs (https://e.com)*"},
		{"code", "run `ls -l`", "run `ls -l`"},
		{"fenced code", "```\nif a < b {}\n```", "```if a < b {}```"},
		{"quote", "> said", "> said"},
	})
}
