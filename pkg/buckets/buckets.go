// Package buckets names the collections of a time-bucketed family: one
// collection per day, ISO week or month ("events_{yyyy}_{mm}" holds a
// month of events as events_2025_07), the way to delete old data at any
// write rate (drop last year's collection rather than delete its
// documents). Application code uses it to pick the collection a document
// of a given time goes to ([Family.Name]) and the collections a query
// over a time range must read ([Family.Span]); mongomig uses it to create
// members ahead of time and drop those past their keep (docs/buckets.md).
//
// It imports only the standard library, so an application links nothing
// else of mongomig's by importing it. Every time is taken in UTC: a
// member's period starts at 00:00 UTC (on a Monday for a week, on the 1st
// for a month), whatever the location of the time given.
package buckets

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Period is how long one member of a family covers.
type Period string

// The periods.
const (
	Day   Period = "day"
	Week  Period = "week" // an ISO 8601 week: Monday to Sunday, {yyyy} its ISO year
	Month Period = "month"
)

// Periods lists every period, in documentation order.
var Periods = []Period{Day, Week, Month}

// The placeholders of a pattern: four-digit year, two-digit month, day of
// the month and ISO week.
const (
	Year     = "{yyyy}"
	MonthNum = "{mm}"
	DayNum   = "{dd}"
	WeekNum  = "{ww}"
)

// needs lists, per period, the placeholders its pattern must hold (each
// once); the others are refused.
var needs = map[Period][]string{
	Day:   {Year, MonthNum, DayNum},
	Week:  {Year, WeekNum},
	Month: {Year, MonthNum},
}

// Family is a declared time-bucketed family: its name pattern and period.
type Family struct {
	Pattern string
	Period  Period
	parts   []part
}

// part is a literal piece of a pattern or one placeholder.
type part struct {
	lit         string
	placeholder string
}

// New checks pattern against period and returns the family. An empty
// period is inferred from the placeholders ({dd}: day, {ww}: week, else
// month). The pattern holds each placeholder the period needs exactly
// once ({yyyy} and {mm} for a month; {yyyy}, {mm} and {dd} for a day;
// {yyyy} and {ww} for a week) and no other "{" or "}".
func New(pattern string, period Period) (Family, error) {
	parts, err := split(pattern)
	if err != nil {
		return Family{}, err
	}
	seen := map[string]bool{}
	for _, p := range parts {
		if p.placeholder != "" {
			seen[p.placeholder] = true
		}
	}
	if period == "" {
		switch {
		case seen[DayNum]:
			period = Day
		case seen[WeekNum]:
			period = Week
		default:
			period = Month
		}
	}
	want, ok := needs[period]
	if !ok {
		return Family{}, fmt.Errorf("unknown period %q: write day, week or month", string(period))
	}
	for _, ph := range want {
		if !seen[ph] {
			return Family{}, fmt.Errorf("pattern %q lacks %s, which a %s family's names need (a %s family: %s)", pattern, ph, period, period, strings.Join(want, ", "))
		}
	}
	for ph := range seen {
		if !contains(want, ph) {
			return Family{}, fmt.Errorf("pattern %q holds %s, which a %s family's names do not have (a %s family: %s)", pattern, ph, period, period, strings.Join(want, ", "))
		}
	}
	return Family{Pattern: pattern, Period: period, parts: parts}, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// split cuts a pattern into literals and placeholders.
func split(pattern string) ([]part, error) {
	var parts []part
	seen := map[string]bool{}
	rest := pattern
	for rest != "" {
		i := strings.IndexAny(rest, "{}")
		if i < 0 {
			parts = append(parts, part{lit: rest})
			break
		}
		if i > 0 {
			parts = append(parts, part{lit: rest[:i]})
		}
		rest = rest[i:]
		ph := ""
		for _, p := range []string{Year, MonthNum, DayNum, WeekNum} {
			if strings.HasPrefix(rest, p) {
				ph = p
			}
		}
		if ph == "" {
			return nil, fmt.Errorf("pattern %q: %q is not a placeholder; use {yyyy}, {mm}, {dd} or {ww}, and no other braces", pattern, cutAt(rest))
		}
		if seen[ph] {
			return nil, fmt.Errorf("pattern %q holds %s twice", pattern, ph)
		}
		seen[ph] = true
		parts = append(parts, part{placeholder: ph})
		rest = rest[len(ph):]
	}
	if len(seen) == 0 {
		return nil, fmt.Errorf("pattern %q holds no placeholder; write one such as events_{yyyy}_{mm}", pattern)
	}
	return parts, nil
}

func cutAt(s string) string {
	if j := strings.IndexByte(s[1:], '}'); j >= 0 && j < 8 {
		return s[:j+2]
	}
	return s[:min(len(s), 6)]
}

// Start is the start of the period that holds t.
func (f Family) Start(t time.Time) time.Time {
	t = t.UTC()
	y, m, d := t.Date()
	switch f.Period {
	case Day:
		return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	case Week:
		back := (int(t.Weekday()) + 6) % 7 // days since Monday
		return time.Date(y, m, d-back, 0, 0, 0, 0, time.UTC)
	default:
		return time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
	}
}

// Add is the start of the period n periods after the one that holds t
// (before it for a negative n).
func (f Family) Add(t time.Time, n int) time.Time {
	s := f.Start(t)
	switch f.Period {
	case Day:
		return s.AddDate(0, 0, n)
	case Week:
		return s.AddDate(0, 0, 7*n)
	default:
		return s.AddDate(0, n, 0)
	}
}

// Name is the name of the member that holds t.
func (f Family) Name(t time.Time) string {
	s := f.Start(t)
	var b strings.Builder
	for _, p := range f.parts {
		switch p.placeholder {
		case "":
			b.WriteString(p.lit)
		case Year:
			y := s.Year()
			if f.Period == Week {
				y, _ = s.ISOWeek()
			}
			fmt.Fprintf(&b, "%04d", y)
		case MonthNum:
			fmt.Fprintf(&b, "%02d", int(s.Month()))
		case DayNum:
			fmt.Fprintf(&b, "%02d", s.Day())
		case WeekNum:
			_, w := s.ISOWeek()
			fmt.Fprintf(&b, "%02d", w)
		}
	}
	return b.String()
}

// ErrNotMember is [Family.Parse]'s answer for a name the family's pattern
// does not produce.
var ErrNotMember = errors.New("not a member of the family")

// Parse returns the start of the period of the member called name. Only a
// name the family produces is a member: events_2025_7 or events_2025_13
// are not members of events_{yyyy}_{mm}, nor is events_2025_07_old.
func (f Family) Parse(name string) (time.Time, error) {
	vals := map[string]int{}
	rest := name
	for _, p := range f.parts {
		if p.placeholder == "" {
			if !strings.HasPrefix(rest, p.lit) {
				return time.Time{}, ErrNotMember
			}
			rest = rest[len(p.lit):]
			continue
		}
		width := 2
		if p.placeholder == Year {
			width = 4
		}
		if len(rest) < width {
			return time.Time{}, ErrNotMember
		}
		digits := rest[:width]
		for _, c := range digits {
			if c < '0' || c > '9' {
				return time.Time{}, ErrNotMember
			}
		}
		n, _ := strconv.Atoi(digits)
		vals[p.placeholder] = n
		rest = rest[width:]
	}
	if rest != "" {
		return time.Time{}, ErrNotMember
	}
	var t time.Time
	switch f.Period {
	case Week:
		// The Monday of ISO week 1 is the Monday of the week of 4 January.
		jan4 := time.Date(vals[Year], 1, 4, 0, 0, 0, 0, time.UTC)
		t = f.Start(jan4).AddDate(0, 0, 7*(vals[WeekNum]-1))
	case Day:
		t = time.Date(vals[Year], time.Month(vals[MonthNum]), vals[DayNum], 0, 0, 0, 0, time.UTC)
	default:
		t = time.Date(vals[Year], time.Month(vals[MonthNum]), 1, 0, 0, 0, 0, time.UTC)
	}
	// Out-of-range numbers (month 13, day 31 of April, week 54) normalise
	// to another date, whose name differs: not a member.
	if f.Name(t) != name {
		return time.Time{}, ErrNotMember
	}
	return t, nil
}

// Span lists the members a query over the times from..to (both included)
// must read, oldest first; nil when to is before from.
func (f Family) Span(from, to time.Time) []string {
	if to.Before(from) {
		return nil
	}
	var out []string
	end := f.Start(to)
	for s := f.Start(from); !s.After(end); s = f.Add(s, 1) {
		out = append(out, f.Name(s))
	}
	return out
}
