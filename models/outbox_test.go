package models

import (
	"context"
	"path/filepath"
	"testing"
)

func TestOutbox(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	key := "telegram/7000/turn/s.1/1/part/0 \x00odd"
	if _, ok, err := st.Sent(ctx, key); ok || err != nil {
		t.Fatalf("Sent before = %v %v", ok, err)
	}
	if err := st.RecordSent(ctx, key, "42"); err != nil {
		t.Fatal(err)
	}
	if err := st.RecordSent(ctx, key, "43"); err != nil {
		t.Fatal(err)
	}
	if id, ok, err := st.Sent(ctx, key); !ok || err != nil || id != "42" {
		t.Fatalf("Sent = %q %v %v, want the first record", id, ok, err)
	}
	if _, ok, _ := st.Sent(ctx, key+"x"); ok {
		t.Fatal("another key is recorded")
	}
}
