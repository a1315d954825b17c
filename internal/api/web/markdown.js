// A small Markdown renderer for text that must be treated as hostile (the
// model's replies). Every piece of the input is HTML-escaped before any
// markup is added, and the only markup added is the fixed set of elements
// below; link targets must be http or https URLs.
//
// Supported: ATX headings (#..######), **bold**, __bold__, *italic*,
// _italic_, `inline code`, ``` fenced code blocks, "-", "*", "+" and "1."
// lists, "> " quotes, [text](http://...) links and paragraphs.
"use strict";

(function (global) {
  var ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

  function escapeHTML(s) {
    return String(s).replace(/[&<>"']/g, function (c) { return ESCAPES[c]; });
  }

  // The placeholder marker: a character removed from the input first, so
  // the input cannot forge placeholders.
  var MARK = "\u0000";

  // inline renders one already-escaped line (or paragraph) of text.
  function inline(escaped) {
    var held = [];
    function hold(html) {
      held.push(html);
      return MARK + (held.length - 1) + MARK;
    }
    var s = escaped;
    // Code spans first: nothing inside them is markup.
    s = s.replace(/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g, function (_, ticks, code) {
      return hold("<code>" + code.trim() + "</code>");
    });
    // Links: [text](url), only for http(s) URLs. The text was escaped, so
    // the URL holds no quote or angle bracket; & is already &amp;.
    s = s.replace(/\[([^\]\n]+)\]\((https?:\/\/[^\s()]+)\)/gi, function (all, text, url) {
      if (url.indexOf(MARK) >= 0) {
        return all; // a code span inside the URL: no link
      }
      return hold('<a href="' + url + '" target="_blank" rel="noopener noreferrer">' + emphasis(text) + "</a>");
    });
    // Bare http(s) URLs become links too.
    s = s.replace(/(^|[\s(])(https?:\/\/[^\s<()\u0000]+[^\s<().,;:!?\u0000])/gi, function (_, lead, url) {
      return lead + hold('<a href="' + url + '" target="_blank" rel="noopener noreferrer">' + url + "</a>");
    });
    s = emphasis(s);
    // Held pieces may hold others (a code span in a link's text): restore
    // until none is left; each pass can only restore earlier holds.
    var marker = new RegExp(MARK + "(\\d+)" + MARK, "g");
    for (var pass = 0; pass <= held.length && s.indexOf(MARK) >= 0; pass++) {
      s = s.replace(marker, function (_, i) { return held[Number(i)]; });
    }
    return s.split(MARK).join("");
  }

  function emphasis(s) {
    s = s.replace(/\*\*(?=\S)([\s\S]*?\S)\*\*/g, "<strong>$1</strong>");
    s = s.replace(/(^|[^\w])__(?=\S)([\s\S]*?\S)__(?!\w)/g, "$1<strong>$2</strong>");
    s = s.replace(/(^|[^*\w])\*(?=[^\s*])([^*\n]*?[^\s*])\*(?!\*)/g, "$1<em>$2</em>");
    s = s.replace(/(^|[^\w])_(?=[^\s_])([^_\n]*?[^\s_])_(?!\w)/g, "$1<em>$2</em>");
    return s;
  }

  var FENCE = /^\s{0,3}(```+|~~~+)\s*([\w+#.-]*)\s*$/;
  var HEADING = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
  var BULLET = /^\s{0,3}[-*+]\s+(.*)$/;
  var ORDERED = /^\s{0,3}(\d{1,9})[.)]\s+(.*)$/;
  var QUOTE = /^\s{0,3}&gt;\s?(.*)$/;
  var RULE = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/;

  // render turns Markdown text into HTML that holds no markup of the input.
  function render(text) {
    var lines = escapeHTML(String(text == null ? "" : text).split(MARK).join("")).replace(/\r\n?/g, "\n").split("\n");
    var out = [];
    var para = [];
    var list = null; // {tag, items: []}
    var quote = [];

    function flushPara() {
      if (para.length) {
        out.push("<p>" + para.map(inline).join("<br>") + "</p>");
        para = [];
      }
    }
    function flushList() {
      if (list) {
        out.push("<" + list.tag + ">" + list.items.map(function (it) { return "<li>" + inline(it) + "</li>"; }).join("") + "</" + list.tag + ">");
        list = null;
      }
    }
    function flushQuote() {
      if (quote.length) {
        out.push("<blockquote>" + quote.map(inline).join("<br>") + "</blockquote>");
        quote = [];
      }
    }
    function flushAll() { flushPara(); flushList(); flushQuote(); }

    for (var i = 0; i < lines.length; i++) {
      var line = lines[i];
      var m = FENCE.exec(line);
      if (m) {
        flushAll();
        var fence = m[1];
        var lang = m[2];
        var code = [];
        i++;
        while (i < lines.length) {
          var close = FENCE.exec(lines[i]);
          if (close && close[1].charAt(0) === fence.charAt(0) && close[1].length >= fence.length && !close[2]) {
            break;
          }
          code.push(lines[i]);
          i++;
        }
        var cls = lang ? ' class="language-' + lang.replace(/[^\w+#.-]/g, "") + '"' : "";
        out.push("<pre><code" + cls + ">" + code.join("\n") + "</code></pre>");
        continue;
      }
      if (/^\s*$/.test(line)) {
        flushAll();
        continue;
      }
      if ((m = HEADING.exec(line))) {
        flushAll();
        var level = m[1].length;
        out.push("<h" + level + ">" + inline(m[2]) + "</h" + level + ">");
        continue;
      }
      if (RULE.test(line)) {
        flushAll();
        out.push("<hr>");
        continue;
      }
      if ((m = QUOTE.exec(line))) {
        flushPara();
        flushList();
        quote.push(m[1]);
        continue;
      }
      var bullet = BULLET.exec(line);
      var ordered = bullet ? null : ORDERED.exec(line);
      if (bullet || ordered) {
        flushPara();
        flushQuote();
        var tag = bullet ? "ul" : "ol";
        if (list && list.tag !== tag) {
          flushList();
        }
        if (!list) {
          list = { tag: tag, items: [] };
        }
        list.items.push(bullet ? bullet[1] : ordered[2]);
        continue;
      }
      if (list && /^\s{2,}\S/.test(line)) {
        // A continuation of the last item.
        list.items[list.items.length - 1] += " " + line.trim();
        continue;
      }
      flushList();
      flushQuote();
      para.push(line);
    }
    flushAll();
    return out.join("\n");
  }

  global.TalariaMarkdown = { render: render, escapeHTML: escapeHTML };
})(window);
