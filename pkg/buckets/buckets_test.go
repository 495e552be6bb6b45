package buckets

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func mustNew(t *testing.T, pattern string, p Period) Family {
	t.Helper()
	f, err := New(pattern, p)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func date(y int, m time.Month, d, h int) time.Time { return time.Date(y, m, d, h, 0, 0, 0, time.UTC) }

func TestNames(t *testing.T) {
	at := date(2025, time.July, 9, 13) // a Wednesday
	for _, c := range []struct {
		pattern string
		period  Period
		want    string
	}{
		{"events_{yyyy}_{mm}", Month, "events_2025_07"},
		{"events_{yyyy}_{mm}", "", "events_2025_07"},
		{"log.{yyyy}{mm}.{dd}", Day, "log.202507.09"},
		{"log_{dd}_{mm}_{yyyy}", "", "log_09_07_2025"},
		{"w_{yyyy}_w{ww}", Week, "w_2025_w28"},
	} {
		f := mustNew(t, c.pattern, c.period)
		if got := f.Name(at); got != c.want {
			t.Errorf("%s: Name = %q, want %q", c.pattern, got, c.want)
		}
		start, err := f.Parse(c.want)
		if err != nil || !start.Equal(f.Start(at)) {
			t.Errorf("%s: Parse(%q) = %v, %v; want %v", c.pattern, c.want, start, err, f.Start(at))
		}
	}
}

// TestWeekYear: the ISO week of 29 December 2025 is week 1 of 2026, and
// 1 January 2021 belongs to week 53 of 2020.
func TestWeekYear(t *testing.T) {
	f := mustNew(t, "w_{yyyy}_{ww}", Week)
	if got := f.Name(date(2025, time.December, 29, 0)); got != "w_2026_01" {
		t.Errorf("got %q", got)
	}
	if got := f.Name(date(2021, time.January, 1, 0)); got != "w_2020_53" {
		t.Errorf("got %q", got)
	}
	if s, err := f.Parse("w_2020_53"); err != nil || !s.Equal(date(2020, time.December, 28, 0)) {
		t.Errorf("Parse = %v, %v", s, err)
	}
}

func TestParseRefusesWhatTheFamilyDoesNotName(t *testing.T) {
	f := mustNew(t, "events_{yyyy}_{mm}", Month)
	for _, name := range []string{"events_2025_7", "events_2025_13", "events_2025_00", "events_2025_07_old", "events_archive", "xevents_2025_07", "events_20a5_07", ""} {
		if _, err := f.Parse(name); !errors.Is(err, ErrNotMember) {
			t.Errorf("Parse(%q) = %v, want ErrNotMember", name, err)
		}
	}
	d := mustNew(t, "d_{yyyy}_{mm}_{dd}", Day)
	if _, err := d.Parse("d_2025_04_31"); !errors.Is(err, ErrNotMember) {
		t.Errorf("31 April: %v", err)
	}
}

func TestSpan(t *testing.T) {
	f := mustNew(t, "events_{yyyy}_{mm}", Month)
	got := f.Span(date(2024, time.November, 30, 23), date(2025, time.February, 1, 0))
	want := []string{"events_2024_11", "events_2024_12", "events_2025_01", "events_2025_02"}
	if !slices.Equal(got, want) {
		t.Errorf("Span = %v, want %v", got, want)
	}
	if got := f.Span(date(2025, 2, 1, 0), date(2025, 1, 1, 0)); got != nil {
		t.Errorf("reversed range: %v", got)
	}
	// A time in another location is taken in UTC.
	tokyo := time.FixedZone("JST", 9*3600)
	if got := f.Name(time.Date(2025, 8, 1, 3, 0, 0, 0, tokyo)); got != "events_2025_07" {
		t.Errorf("Name in JST = %q", got)
	}
}

func TestNewRefusesBadPatterns(t *testing.T) {
	for _, c := range []struct {
		pattern string
		period  Period
		want    string
	}{
		{"events", Month, "no placeholder"},
		{"events_{yyyy}", Month, "lacks {mm}"},
		{"events_{yyyy}_{mm}_{dd}", Month, "holds {dd}"},
		{"events_{yyyy}_{ww}", Day, "lacks {mm}"},
		{"events_{yyyy}_{mm}_{yyyy}", Month, "twice"},
		{"events_{year}_{mm}", Month, "not a placeholder"},
		{"events_{yyyy}_{mm}", "quarter", "unknown period"},
	} {
		_, err := New(c.pattern, c.period)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%q, %q) = %v, want an error saying %q", c.pattern, c.period, err, c.want)
		}
	}
}
