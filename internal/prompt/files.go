package prompt

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"unicode/utf8"
)

// readOptional reads a text file. A missing file gives ok=false and no
// error; a file that exists but cannot be read (a directory, no
// permission) is an error. The text has CRLF line ends turned into LF and
// invalid UTF-8 replaced, so what reaches the prompt is clean text.
func readOptional(path string) (text string, ok bool, err error) {
	data, err := readRegular(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("%w %s: %w", ErrUnreadable, path, err)
	}
	return cleanText(string(data)), true, nil
}

// cleanText normalises line ends and replaces invalid UTF-8.
func cleanText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n")
}

// charCount counts characters (runes), the unit of every cap.
func charCount(s string) int { return utf8.RuneCountInString(s) }

// capText keeps the first max characters of s and, when it cut anything,
// appends a marker that gives the full length.
func capText(s string, max int) string {
	n := charCount(s)
	if n <= max {
		return s
	}
	cut := len(s)
	i := 0
	for off := range s {
		if i == max {
			cut = off
			break
		}
		i++
	}
	return strings.TrimRight(s[:cut], " \t\n") +
		fmt.Sprintf("\n\n[... truncated: the file has %d characters; only the first %d are shown ...]", n, max)
}
