package main

import (
	"fmt"
	"testing"
)

func TestEditorArgs(t *testing.T) {
	env := func(name string) string {
		return map[string]string{"HOME": "/home/ana", "EDITOR_FLAGS": "--wait --new-window"}[name]
	}
	tests := []struct {
		editor  string
		want    []string
		wantErr bool
	}{
		{"", []string{"vi", "/f.md"}, false},
		{"   ", []string{"vi", "/f.md"}, false},
		{"nano", []string{"nano", "/f.md"}, false},
		{"code -w", []string{"code", "-w", "/f.md"}, false},
		{`"/opt/My Editor/ed" --wait`, []string{"/opt/My Editor/ed", "--wait", "/f.md"}, false},
		{`~/bin/ed $EDITOR_FLAGS`, []string{"/home/ana/bin/ed", "--wait", "--new-window", "/f.md"}, false},
		{`emacs -nw 'unclosed`, nil, true},
		{`$NOTHING`, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.editor, func(t *testing.T) {
			got, err := editorArgs(tt.editor, "/f.md", env)
			if (err != nil) != tt.wantErr || fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tt.want) {
				t.Fatalf("editorArgs(%q) = %q, %v; want %q (error %v)", tt.editor, got, err, tt.want, tt.wantErr)
			}
		})
	}
}
