package models

import "testing"

func TestSetSystemPromptOnce(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		if _, err := s.EnsureSession(t.Context(), "p", "m"); err != nil {
			t.Fatal(err)
		}
		got, err := s.SetSystemPromptOnce(t.Context(), "p", "first prompt")
		if err != nil || got != "first prompt" {
			t.Fatalf("first: %q %v", got, err)
		}
		got, err = s.SetSystemPromptOnce(t.Context(), "p", "second prompt")
		if err != nil || got != "first prompt" {
			t.Fatalf("second: %q %v (the first prompt must be kept byte for byte)", got, err)
		}
	})
}
