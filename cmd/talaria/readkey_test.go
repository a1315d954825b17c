package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// TestReadKey: --api-key-stdin reads one line from a pipe or file; on a
// terminal it asks, and the key typed is not echoed.
func TestReadKey(t *testing.T) {
	for _, tt := range []struct{ in, key, err string }{
		{"sk-one\n", "sk-one", ""},
		{"  sk-two  \nmore\n", "sk-two", ""},
		{"sk-no-newline", "sk-no-newline", ""},
		{"\n", "", "no key on standard input"},
		{"", "", "no key on standard input"},
	} {
		key, err := readKey(strings.NewReader(tt.in), io.Discard)
		if key != tt.key || (tt.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("readKey(%q) = %q, %v; want %q, %q", tt.in, key, err, tt.key, tt.err)
		}
	}

	master, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty here: %v", err)
	}
	defer master.Close()
	defer tty.Close()
	type result struct {
		key string
		err error
	}
	done := make(chan result, 1)
	var prompt bytes.Buffer
	go func() {
		key, err := readKey(tty, &prompt)
		done <- result{key, err}
	}()
	// Type only once the terminal no longer echoes.
	deadline := time.Now().Add(time.Minute)
	for {
		st, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
		if err != nil {
			t.Fatal(err)
		}
		if st.Lflag&unix.ECHO == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the terminal still echoes while the key is read")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := master.Write([]byte("sk-typed\r")); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.key != "sk-typed" {
		t.Fatalf("readKey on a terminal = %q, %v", r.key, r.err)
	}
	if !strings.Contains(prompt.String(), "API key") {
		t.Fatalf("no prompt: %q", prompt.String())
	}
	// Whatever the terminal shows back must not hold the key.
	fd := int(master.Fd()) // Fd makes the file blocking: take it once
	if err := unix.SetNonblock(fd, true); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // room for the line discipline's echo, if any, to show
	shown := make([]byte, 4096)
	n, _ := unix.Read(fd, shown)
	shown = shown[:max(n, 0)]
	if strings.Contains(string(shown), "sk-typed") {
		t.Fatalf("the key was echoed: %q", shown)
	}
}
