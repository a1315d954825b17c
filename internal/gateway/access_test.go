package gateway

import (
	"testing"
	"time"
)

func TestAccess(t *testing.T) {
	nobody := &Access{}
	if nobody.Allowed("1") || nobody.Allowed("") {
		t.Error("an empty list allows someone")
	}
	a := &Access{Users: []string{"1"}}
	if !a.Allowed("1") || a.Allowed("2") {
		t.Error("the allow list is not followed")
	}
	if all := (&Access{AllowAll: true}); !all.Allowed("anyone") || all.Allowed("") {
		t.Error("allow_all does not allow everyone with an id")
	}
	now := time.Unix(1000, 0)
	if !a.ShouldRefuse("2", now) || a.ShouldRefuse("2", now.Add(time.Minute)) || !a.ShouldRefuse("2", now.Add(11*time.Minute)) {
		t.Error("refusals are not once per 10 minutes")
	}
	if !a.ShouldRefuse("3", now) {
		t.Error("another stranger is not refused")
	}
}
