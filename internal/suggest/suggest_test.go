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
}
