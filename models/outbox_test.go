package models

import (
	"context"
	"testing"
)

func TestOutbox(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) { testOutbox(t, openStore(t, dsn)) })
}

func testOutbox(t *testing.T, st *Store) {
	ctx := context.Background()
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
