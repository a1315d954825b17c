package models

import "testing"

func TestClaimTool(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		earlier, err := s.ClaimTool(t.Context(), "turn/s/1/call-1/tool/a")
		if err != nil || earlier {
			t.Fatalf("first claim: earlier=%v err=%v", earlier, err)
		}
		earlier, err = s.ClaimTool(t.Context(), "turn/s/1/call-1/tool/a")
		if err != nil || !earlier {
			t.Fatalf("second claim: earlier=%v err=%v", earlier, err)
		}
		if _, err := s.ClaimTool(t.Context(), ""); err == nil {
			t.Fatal("empty key accepted")
		}
	})
}
