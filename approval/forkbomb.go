package approval

import (
	"regexp"
	"strings"
)

var (
	// funcParens finds the "() {" or "() (" after a function name.
	funcParens = regexp.MustCompile(`\(\s*\)\s*[{(]`)
	// funcKeyword finds "function NAME".
	funcKeyword = regexp.MustCompile(`(?:^|[\s;&|(){}])function\s+([^\s;&|(){}<>]+)`)
)

// isNameByte reports whether c can be part of a function name.
func isNameByte(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', ';', '&', '|', '(', ')', '{', '}', '<', '>':
		return false
	}
	return true
}

// hasForkBomb reports whether the skeleton of a script defines a function
// that pipes into itself, the shape of ":(){ :|:& };:" whatever the name.
func hasForkBomb(sk string) bool {
	if !strings.Contains(sk, "|") {
		return false
	}
	names := map[string]bool{}
	for _, m := range funcParens.FindAllStringIndex(sk, -1) {
		end := m[0]
		for end > 0 && (sk[end-1] == ' ' || sk[end-1] == '\t') {
			end--
		}
		start := end
		for start > 0 && isNameByte(sk[start-1]) {
			start--
		}
		if start < end {
			names[sk[start:end]] = true
		}
	}
	for _, m := range funcKeyword.FindAllStringSubmatch(sk, -1) {
		names[m[1]] = true
	}
	if len(names) == 0 {
		return false
	}
	// Look at both sides of every single '|': "f|f", "f | f &".
	for i := 0; i < len(sk); i++ {
		if sk[i] != '|' || (i+1 < len(sk) && sk[i+1] == '|') || (i > 0 && sk[i-1] == '|') {
			continue
		}
		l := i
		for l > 0 && (sk[l-1] == ' ' || sk[l-1] == '\t') {
			l--
		}
		ls := l
		for ls > 0 && isNameByte(sk[ls-1]) {
			ls--
		}
		r := i + 1
		for r < len(sk) && (sk[r] == ' ' || sk[r] == '\t') {
			r++
		}
		re := r
		for re < len(sk) && isNameByte(sk[re]) {
			re++
		}
		if ls < l && sk[ls:l] == sk[r:re] && names[sk[ls:l]] {
			return true
		}
	}
	return false
}
