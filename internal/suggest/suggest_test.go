package suggest

import "testing"

func TestClosest(t *testing.T) {
	known := []string{"validationLevel", "validationAction", "upgrade", "indexes"}
	for _, tc := range []struct {
		got, want string
		ok        bool
	}{
		{"validatonLevel", "validationLevel", true},
		{"VALIDATIONACTION", "validationAction", true},
		{"upgrad", "upgrade", true},
		{"something", "", false},
	} {
		w, ok := Closest(tc.got, known)
		if w != tc.want || ok != tc.ok {
			t.Errorf("Closest(%q) = %q, %v; want %q, %v", tc.got, w, ok, tc.want, tc.ok)
		}
	}
	if d := Distance("kitten", "sitting"); d != 3 {
		t.Errorf("Distance = %d, want 3", d)
	}
	for _, tc := range []struct {
		a, b string
		want int
	}{{"dri", "dir", 1}, {"dri", "uri", 1}, {"ab", "ba", 1}, {"abc", "ca", 3}, {"", "ab", 2}} {
		if d := Distance(tc.a, tc.b); d != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, d, tc.want)
		}
	}
	// A swap is as near as a wrong letter; the shared prefix decides.
	flags := []string{"uri", "db", "dir", "json"}
	if w, _ := Closest("dri", flags); w != "dir" {
		t.Errorf("Closest(dri) = %q, want dir", w)
	}
	if w, _ := Closest("urj", flags); w != "uri" {
		t.Errorf("Closest(urj) = %q, want uri", w)
	}
}
