package cron

import (
	"fmt"
	"time"
)

// HorizonYears bounds every search. The Gregorian calendar repeats every 400 years, so
// a schedule with no time in 400 years has none at all.
const HorizonYears = 400

// NeverRunsError says that no time within the horizon matches the schedule.
type NeverRunsError struct {
	Expression string
	After      time.Time
}

func (e *NeverRunsError) Error() string {
	return fmt.Sprintf("never runs: no time in the %d years after %s matches %q",
		HorizonYears, e.After.Format(time.RFC3339), e.Expression)
}

// wallKey orders local wall-clock times, to the minute.
func wallKey(t time.Time) int64 {
	day := (int64(t.Year())*13+int64(t.Month()))*32 + int64(t.Day())
	return day*24*60 + int64(t.Hour())*60 + int64(t.Minute())
}

func (s *Schedule) dayMatches(t time.Time) bool {
	dom := s.dom.has(t.Day())
	dow := s.dow.has(int(t.Weekday()))
	if s.domStar || s.dowStar {
		return dom && dow
	}
	return dom || dow
}

// Matches reports whether the schedule fires in the minute of t, read on the wall
// clock of loc.
func (s *Schedule) Matches(t time.Time, loc *time.Location) bool {
	local := t.In(loc)
	return s.month.has(int(local.Month())) && s.dayMatches(local) && s.hour.has(local.Hour()) &&
		s.minute.has(local.Minute())
}

// Runs returns the next count times after `after` (exclusive, to the minute) at which
// the schedule fires on the wall clock of loc.
//
// Daylight-saving changes follow cron: a wall-clock time skipped when clocks go
// forward does not run, and one repeated when clocks go back runs once, at its first
// occurrence.
func (s *Schedule) Runs(after time.Time, loc *time.Location, count int) ([]time.Time, error) {
	t := after.In(loc)
	t = t.Add(time.Minute - time.Duration(t.Second())*time.Second - time.Duration(t.Nanosecond()))
	limit := t.AddDate(HorizonYears, 0, 0)
	// The latest wall-clock minute passed so far: a minute at or before it, met again
	// after clocks went back, has had its chance.
	last := wallKey(t) - 1
	jump := func(to time.Time) {
		// time.Date of a wall-clock time in a daylight-saving gap may land before t:
		// step instead, so the search always moves forward.
		if !to.After(t) {
			to = t.Add(time.Minute)
		}
		if passed := wallKey(to.Add(-time.Minute)); passed > last {
			last = passed
		}
		t = to
	}
	runs := make([]time.Time, 0, count)
	for len(runs) < count {
		if !t.Before(limit) {
			return nil, &NeverRunsError{Expression: s.Expression, After: after}
		}
		key := wallKey(t)
		switch {
		case key <= last:
			t = t.Add(time.Minute)
		case !s.month.has(int(t.Month())):
			jump(time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, loc))
		case !s.dayMatches(t):
			jump(time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, loc))
		case !s.hour.has(t.Hour()):
			jump(t.Add(time.Duration(60-t.Minute()) * time.Minute))
		default:
			if s.minute.has(t.Minute()) {
				runs = append(runs, t)
				limit = t.AddDate(HorizonYears, 0, 0)
			}
			last = key
			t = t.Add(time.Minute)
		}
	}
	return runs, nil
}
