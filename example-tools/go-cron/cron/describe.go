package cron

import (
	"fmt"
	"strconv"
	"strings"
)

var monthNames = [13]string{"", "January", "February", "March", "April", "May", "June", "July", "August",
	"September", "October", "November", "December"}

// WeekdayNames are indexed by day of week, 0 = Sunday.
var WeekdayNames = [7]string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}

// Fields are the values each field allows, in order; days of the week run 0 (Sunday)
// to 6.
type Fields struct {
	Minute     []int `json:"minute"`
	Hour       []int `json:"hour"`
	DayOfMonth []int `json:"day_of_month"`
	Month      []int `json:"month"`
	DayOfWeek  []int `json:"day_of_week"`
}

// Fields returns the values of every field.
func (s *Schedule) Fields() Fields {
	return Fields{s.minute.values(), s.hour.values(), s.dom.values(), s.month.values(), s.dow.values()}
}

// DayRule says how the two day fields combine: "any" (both unrestricted),
// "day_of_month", "day_of_week", "both" (either starts with `*`, so both must match) or
// "either" (both restricted: a day matching either runs).
func (s *Schedule) DayRule() string {
	allDays, allWeekdays := s.dom == fullSet(domField), s.dow == fullSet(dowField)&^(1<<7)
	switch {
	case allDays && allWeekdays:
		return "any"
	case allWeekdays && s.dowStar:
		return "day_of_month"
	case allDays && s.domStar:
		return "day_of_week"
	case s.domStar || s.dowStar:
		return "both"
	default:
		return "either"
	}
}

func fullSet(f field) set {
	var s set
	for v := f.min; v <= f.max; v++ {
		s |= 1 << uint(v)
	}
	return s
}

// Describe says in English when the schedule runs, for example "At 09:00 and 17:30,
// Monday through Friday" or "Every 15 minutes, on day 1 of the month, in January".
func (s *Schedule) Describe() string {
	text := s.describeTime()
	switch s.DayRule() {
	case "day_of_month":
		text += ", on " + s.describeDays()
	case "day_of_week":
		text += ", on " + s.describeWeekdays("and")
	case "both":
		text += ", on " + s.describeDays() + " if it is a " + s.describeWeekdays("or")
	case "either":
		text += ", on " + s.describeDays() + " and on every " + s.describeWeekdays("and")
	}
	if s.month != fullSet(monthField) {
		text += ", in " + listOf(s.month.values(), func(m int) string { return monthNames[m] }, "and")
	}
	return text
}

func (s *Schedule) describeTime() string {
	minutes, hours := s.minute.values(), s.hour.values()
	allMinutes, allHours := len(minutes) == 60, len(hours) == 24
	switch {
	case allMinutes && allHours:
		return "Every minute"
	case allMinutes:
		return "Every minute of " + hourPhrase(hours)
	case len(minutes)*len(hours) <= 6:
		times := make([]string, 0, len(minutes)*len(hours))
		for _, h := range hours {
			for _, m := range minutes {
				times = append(times, fmt.Sprintf("%02d:%02d", h, m))
			}
		}
		return "At " + join(times, "and")
	}
	var minutePart string
	if step, ok := everyN(minutes, 60); ok {
		minutePart = fmt.Sprintf("Every %d minutes", step)
	} else {
		minutePart = "At minutes " + listOf(minutes, strconv.Itoa, "and")
		if len(minutes) == 1 {
			minutePart = "At minute " + strconv.Itoa(minutes[0])
		}
	}
	if allHours {
		if strings.HasPrefix(minutePart, "Every") {
			return minutePart
		}
		return minutePart + " past every hour"
	}
	return minutePart + " of " + hourPhrase(hours)
}

func hourPhrase(hours []int) string {
	if step, ok := everyN(hours, 24); ok {
		return fmt.Sprintf("every %d hours", step)
	}
	if len(hours) == 1 {
		return "hour " + strconv.Itoa(hours[0])
	}
	return "hours " + listOf(hours, strconv.Itoa, "and")
}

func (s *Schedule) describeDays() string {
	days := s.dom.values()
	if step, ok := everyNFrom(days, 1, 31); ok {
		return fmt.Sprintf("every %s day of the month", ordinal(step))
	}
	if len(days) == 1 {
		return fmt.Sprintf("day %d of the month", days[0])
	}
	return "days " + listOf(days, strconv.Itoa, "and") + " of the month"
}

func (s *Schedule) describeWeekdays(conjunction string) string {
	return listOf(s.dow.values(), func(d int) string { return WeekdayNames[d] }, conjunction)
}

// everyN reports whether values are 0, n, 2n, … up to size, with n > 1.
func everyN(values []int, size int) (int, bool) {
	return everyNFrom(values, 0, size-1)
}

func everyNFrom(values []int, first, top int) (int, bool) {
	if len(values) < 2 || values[0] != first {
		return 0, false
	}
	step := values[1] - values[0]
	if step < 2 || len(values) != (top-first)/step+1 {
		return 0, false
	}
	for i, v := range values {
		if v != first+i*step {
			return 0, false
		}
	}
	return step, true
}

func ordinal(n int) string {
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return strconv.Itoa(n) + suffix
}

// listOf names values, runs of three or more consecutive ones as "A through B".
func listOf(values []int, name func(int) string, conjunction string) string {
	var parts []string
	for i := 0; i < len(values); {
		j := i
		for j+1 < len(values) && values[j+1] == values[j]+1 {
			j++
		}
		if j-i >= 2 {
			parts = append(parts, name(values[i])+" through "+name(values[j]))
		} else {
			for k := i; k <= j; k++ {
				parts = append(parts, name(values[k]))
			}
		}
		i = j + 1
	}
	return join(parts, conjunction)
}

// join lists parts in English: "a", "a and b", "a, b and c".
func join(parts []string, conjunction string) string {
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " " + conjunction + " " + parts[len(parts)-1]
}
