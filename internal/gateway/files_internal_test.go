package gateway

import (
	"testing"
)

// TestTakenMessage: the caption first, then the transcripts, then one line
// per file.
func TestTakenMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		caption string
		t       taken
		want    string
	}{
		{"caption only", " hi ", taken{}, "hi"},
		{"a document", "read this", taken{notes: []string{"[document attached: uploads/a/x.pdf (application/pdf, 1.0 KB)]"}},
			"read this\n\n[document attached: uploads/a/x.pdf (application/pdf, 1.0 KB)]"},
		{"a voice memo alone", "", taken{transcripts: []string{"call mum"}, notes: []string{"[voice memo attached: v.ogg]"}},
			"call mum\n\n[voice memo attached: v.ogg]"},
		{"two files", "", taken{notes: []string{"[a]", "[b]"}}, "[a]\n[b]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.t.Message(tt.caption); got != tt.want {
				t.Fatalf("Message = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestDescribeFile names a file by its name, else by what it is.
func TestDescribeFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		f    File
		want string
	}{
		{File{Name: "../../etc/passwd"}, "passwd"},
		{File{Voice: true}, "the voice memo"},
		{File{MIME: "image/jpeg"}, "the picture"},
		{File{}, "the file"},
	}
	for _, tt := range tests {
		if got := describeFile(tt.f); got != tt.want {
			t.Errorf("describeFile(%+v) = %q, want %q", tt.f, got, tt.want)
		}
	}
}
