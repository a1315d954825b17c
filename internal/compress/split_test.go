package compress

import (
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/models"
)

func keys(ms []models.Message) string {
	var k []string
	for _, m := range ms {
		k = append(k, m.IdemKey)
	}
	return strings.Join(k, ",")
}

func TestSplit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name            string
		msgs            []models.Message
		first, last     int
		head, mid, tail string
	}{
		{"empty", nil, 3, 2, "", "", ""},
		{"short conversation kept whole",
			numbered(sys("s"), user("u"), assistant("a")), 3, 20, "0,1,2", "", ""},
		{"head and tail overlap",
			numbered(sys("s"), user("u"), assistant("a"), user("u2"), assistant("a2")), 3, 3, "0,1,2", "", "3,4"},
		{"exact boundaries",
			numbered(sys("s"), user("u"), assistant("a"), user("u2"), assistant("a2"), user("u3")), 3, 3, "0,1,2", "", "3,4,5"},
		{"plain split",
			numbered(sys("s"), user("u"), assistant("a"), user("m1"), assistant("m2"), user("t1"), assistant("t2")), 3, 2, "0,1,2", "3,4", "5,6"},
		{"tool group extends head",
			numbered(sys("s"), user("u"), call("a", "b"), result("a"), result("b"), user("m"), assistant("m2"), user("t")), 3, 1, "0,1,2,3,4", "5,6", "7"},
		{"tool group extends tail backwards",
			numbered(sys("s"), user("u"), assistant("a"), user("m"), call("x"), result("x"), assistant("done")), 3, 2, "0,1,2", "3", "4,5,6"},
		{"tool pairs at both boundaries",
			numbered(sys("s"), call("a"), result("a"), result2("a2"), user("m"), call("b", "c"), result("b"), result("c"), assistant("end")), 2, 2, "0,1,2,3", "4", "5,6,7,8"},
		{"steer message inside a tool group",
			numbered(user("u"), call("a", "b"), result("a"), user("steer"), result("b"), user("m"), user("t")), 2, 1, "0,1,2,3,4", "5", "6"},
		{"orphan tool result never starts tail",
			numbered(user("u"), assistant("a"), user("m"), result("zz"), assistant("t")), 2, 2, "0,1", "", "2,3,4"},
		{"defaults",
			numbered(make([]models.Message, 30)...), 0, 0, "0,1,2", "3,4,5,6,7,8,9", "10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29"},
		{"keep counts one",
			numbered(user("a"), assistant("b"), user("c"), assistant("d")), 1, 1, "0", "1,2", "3"},
		{"group spanning everything",
			numbered(user("u"), call("a"), user("x"), user("y"), result("a")), 2, 1, "0,1,2,3,4", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := Split(tt.msgs, tt.first, tt.last)
			if got := keys(p.Head); got != tt.head {
				t.Errorf("head = %q, want %q", got, tt.head)
			}
			if got := keys(p.Middle); got != tt.mid {
				t.Errorf("middle = %q, want %q", got, tt.mid)
			}
			if got := keys(p.Tail); got != tt.tail {
				t.Errorf("tail = %q, want %q", got, tt.tail)
			}
		})
	}
}

// result2 is a tool result answering a call that was never made.
func result2(id string) models.Message { return result(id) }

func TestSplitDoesNotAlias(t *testing.T) {
	t.Parallel()
	msgs := numbered(user("a"), assistant("b"), user("c"), assistant("d"), user("e"))
	p := Split(msgs, 1, 1)
	p.Head[0].Content = "changed"
	p.Middle[0].Content = "changed"
	if msgs[0].Content != "a" || msgs[1].Content != "b" {
		t.Fatal("Split result aliases its input")
	}
}
