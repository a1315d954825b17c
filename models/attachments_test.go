package models

import (
	"bytes"
	"context"
	"errors"
	"testing"
)

// TestAttachmentsAndSecrets: bytes are stored once under their digest and
// read back; a secret is made once and the same for every caller.
func TestAttachmentsAndSecrets(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, dsn string) {
		t.Parallel()
		testAttachmentsAndSecrets(t, openStore(t, dsn))
	})
}

func testAttachmentsAndSecrets(t *testing.T, st *Store) {
	ctx := context.Background()
	data := []byte("\x89PNG a picture")
	id, err := st.PutAttachment(ctx, "image/png", data)
	if err != nil {
		t.Fatal(err)
	}
	again, err := st.PutAttachment(ctx, "image/png", data)
	if err != nil || again != id || id != AttachmentID(data) {
		t.Fatalf("stored again under %q (%v), want %q", again, err, id)
	}
	a, err := st.Attachment(ctx, id)
	if err != nil || !bytes.Equal(a.Data, data) || a.MIME != "image/png" || a.Size != int64(len(data)) {
		t.Fatalf("read back %+v, %v", a, err)
	}
	if _, err := st.Attachment(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a missing attachment: %v", err)
	}
	s1, err := st.Secret(ctx, "gateway")
	if err != nil || len(s1) != 32 {
		t.Fatalf("secret %x, %v", s1, err)
	}
	s2, _ := st.Secret(ctx, "gateway")
	other, _ := st.Secret(ctx, "other")
	if !bytes.Equal(s1, s2) || bytes.Equal(s1, other) {
		t.Fatal("a secret changed, or two names share one")
	}
}
