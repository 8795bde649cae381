// Package cron reads standard five-field cron expressions and finds the times they
// name, in any IANA time zone. It is plain Go with no WebAssembly in it, so its tests
// run natively with `go test ./cron/`.
package cron

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// A set of values of one field, as bits: bit n is set when value n is in the set.
type set uint64

func (s set) has(value int) bool { return s&(1<<uint(value)) != 0 }

func (s set) values() []int {
	out := make([]int, 0, bits.OnesCount64(uint64(s)))
	for rest := uint64(s); rest != 0; rest &= rest - 1 {
		out = append(out, bits.TrailingZeros64(rest))
	}
	return out
}

func (s set) min() int { return bits.TrailingZeros64(uint64(s)) }

// field describes one of the five fields.
type field struct {
	name     string
	min, max int
	names    []string // names[i] stands for min+i, when the field has names
}

var (
	minuteField = field{name: "minute", min: 0, max: 59}
	hourField   = field{name: "hour", min: 0, max: 23}
	domField    = field{name: "day-of-month", min: 1, max: 31}
	monthField  = field{
		name: "month", min: 1, max: 12,
		names: []string{"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"},
	}
	// 7 is Sunday too, as in most crons; it is folded into 0 after parsing.
	dowField = field{
		name: "day-of-week", min: 0, max: 7,
		names: []string{"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"},
	}
)

// Schedule is a parsed cron expression.
type Schedule struct {
	// Expression is the five fields, macros expanded and spaces normalised.
	Expression string
	minute     set
	hour       set
	dom        set
	month      set
	dow        set
	// Whether the day-of-month and day-of-week fields start with `*` or `?`. As in Vixie
	// cron (and so most crons), a day matches when both fields match if either starts
	// with `*`, and when either matches if both are restricted.
	domStar, dowStar bool
}

var macros = map[string]string{
	"@yearly":   "0 0 1 1 *",
	"@annually": "0 0 1 1 *",
	"@monthly":  "0 0 1 * *",
	"@weekly":   "0 0 * * 0",
	"@daily":    "0 0 * * *",
	"@midnight": "0 0 * * *",
	"@hourly":   "0 * * * *",
}

// Parse reads a five-field cron expression (minute hour day-of-month month day-of-week)
// or one of the macros @yearly, @annually, @monthly, @weekly, @daily, @midnight and
// @hourly. The error says which field is wrong and why.
func Parse(expression string) (*Schedule, error) {
	text := strings.TrimSpace(expression)
	if strings.HasPrefix(text, "@") {
		expanded, ok := macros[strings.ToLower(text)]
		if !ok {
			if strings.EqualFold(text, "@reboot") {
				return nil, fmt.Errorf("@reboot runs when a machine starts, not at times that can be computed")
			}
			return nil, fmt.Errorf("unknown macro %q: use @yearly, @annually, @monthly, @weekly, @daily, @midnight or @hourly", text)
		}
		text = expanded
	}
	parts := strings.Fields(text)
	if len(parts) != 5 {
		return nil, fmt.Errorf("expected 5 fields (minute hour day-of-month month day-of-week), got %d in %q", len(parts), text)
	}
	s := &Schedule{Expression: strings.Join(parts, " ")}
	var err error
	if s.minute, err = parseField(parts[0], minuteField); err != nil {
		return nil, err
	}
	if s.hour, err = parseField(parts[1], hourField); err != nil {
		return nil, err
	}
	if s.dom, err = parseField(parts[2], domField); err != nil {
		return nil, err
	}
	if s.month, err = parseField(parts[3], monthField); err != nil {
		return nil, err
	}
	if s.dow, err = parseField(parts[4], dowField); err != nil {
		return nil, err
	}
	if s.dow.has(7) {
		s.dow = s.dow&^(1<<7) | 1
	}
	s.domStar = strings.HasPrefix(parts[2], "*") || strings.HasPrefix(parts[2], "?")
	s.dowStar = strings.HasPrefix(parts[4], "*") || strings.HasPrefix(parts[4], "?")
	if err := s.checkDaysExist(); err != nil {
		return nil, err
	}
	return s, nil
}

// parseField reads a comma-separated list of `*`, `?` (day fields only), `N`, `A-B`,
// each optionally followed by `/STEP`; `N/STEP` means from N to the field's maximum.
func parseField(text string, f field) (set, error) {
	var out set
	for _, item := range strings.Split(text, ",") {
		if item == "" {
			return 0, fmt.Errorf("%s field %q: empty list item", f.name, text)
		}
		rangeText, stepText, hasStep := strings.Cut(item, "/")
		step := 1
		if hasStep {
			n, err := strconv.Atoi(stepText)
			if err != nil || n < 1 {
				return 0, fmt.Errorf("%s field %q: step %q is not a positive whole number", f.name, text, stepText)
			}
			step = n
		}
		var low, high int
		// `*` and `N/STEP` reach the top of the field; for days of the week that is 6, so
		// that Sunday is not counted twice (as 0 and as 7).
		top := f.max
		if f.name == dowField.name {
			top = 6
		}
		switch {
		case rangeText == "*" || (rangeText == "?" && (f.name == domField.name || f.name == dowField.name)):
			low, high = f.min, top
		case strings.Contains(rangeText, "-"):
			lowText, highText, _ := strings.Cut(rangeText, "-")
			var err error
			if low, err = parseValue(lowText, f, text); err != nil {
				return 0, err
			}
			if high, err = parseValue(highText, f, text); err != nil {
				return 0, err
			}
			if low > high {
				return 0, fmt.Errorf("%s field %q: range %s runs backwards; write it as two ranges", f.name, text, rangeText)
			}
		default:
			var err error
			if low, err = parseValue(rangeText, f, text); err != nil {
				return 0, err
			}
			high = low
			if hasStep {
				high = top
			}
		}
		if low > high {
			return 0, fmt.Errorf("%s field %q: %s names no value", f.name, text, item)
		}
		for v := low; v <= high; v += step {
			out |= 1 << uint(v)
		}
	}
	return out, nil
}

func parseValue(text string, f field, whole string) (int, error) {
	for i, name := range f.names {
		if strings.EqualFold(text, name) {
			return f.min + i, nil
		}
	}
	n, err := strconv.Atoi(text)
	if err != nil {
		if f.names != nil {
			return 0, fmt.Errorf("%s field %q: %q is neither a number nor one of %s", f.name, whole, text, strings.Join(f.names, " "))
		}
		return 0, fmt.Errorf("%s field %q: %q is not a number", f.name, whole, text)
	}
	if n < f.min || n > f.max {
		return 0, fmt.Errorf("%s field %q: %d is out of range %d-%d", f.name, whole, n, f.min, f.max)
	}
	return n, nil
}

var monthDays = [13]int{0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

// checkDaysExist refuses an expression whose days are named only by day of month and
// none of them exists in any of its months ("30 February"): it would never run.
func (s *Schedule) checkDaysExist() error {
	if !s.dowStar {
		return nil // a weekday rule can still pick days
	}
	first := s.dom.min()
	for _, m := range s.month.values() {
		if first <= monthDays[m] {
			return nil
		}
	}
	months := make([]string, 0, 12)
	for _, m := range s.month.values() {
		months = append(months, monthNames[m])
	}
	return fmt.Errorf("never runs: day %d of the month does not occur in %s", first, join(months, "or"))
}
