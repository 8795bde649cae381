package cron

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func mustParse(t *testing.T, expression string) *Schedule {
	t.Helper()
	s, err := Parse(expression)
	if err != nil {
		t.Fatalf("Parse(%q): %v", expression, err)
	}
	return s
}

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := LoadZone(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func at(t *testing.T, text string) time.Time {
	t.Helper()
	parsed, err := time.Parse(time.RFC3339, text)
	if err != nil {
		t.Fatal(err)
	}
	return parsed
}

func runs(t *testing.T, expression, zone, after string, count int) []string {
	t.Helper()
	times, err := mustParse(t, expression).Runs(at(t, after), mustZone(t, zone), count)
	if err != nil {
		t.Fatalf("Runs(%q): %v", expression, err)
	}
	out := make([]string, len(times))
	for i, r := range times {
		out[i] = r.Format(time.RFC3339)
	}
	return out
}

func TestFieldsAndMacros(t *testing.T) {
	cases := []struct {
		expression string
		want       Fields
		normalised string
	}{
		{"*/15 9-17 * * MON-FRI", Fields{[]int{0, 15, 30, 45}, span(9, 17), span(1, 31), span(1, 12), span(1, 5)},
			"*/15 9-17 * * MON-FRI"},
		{"  5,10  0 1,15 jan,Jul 7 ", Fields{[]int{5, 10}, []int{0}, []int{1, 15}, []int{1, 7}, []int{0}},
			"5,10 0 1,15 jan,Jul 7"},
		{"@weekly", Fields{[]int{0}, []int{0}, span(1, 31), span(1, 12), []int{0}}, "0 0 * * 0"},
		{"0 0 ? * 1/2", Fields{[]int{0}, []int{0}, span(1, 31), span(1, 12), []int{1, 3, 5}}, "0 0 ? * 1/2"},
		{"0 0 * * 5-7", Fields{[]int{0}, []int{0}, span(1, 31), span(1, 12), []int{0, 5, 6}}, "0 0 * * 5-7"},
		{"0 12 10-20/5 * *", Fields{[]int{0}, []int{12}, []int{10, 15, 20}, span(1, 12), span(0, 6)},
			"0 12 10-20/5 * *"},
	}
	for _, c := range cases {
		s := mustParse(t, c.expression)
		if got := s.Fields(); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: fields %v, want %v", c.expression, got, c.want)
		}
		if s.Expression != c.normalised {
			t.Errorf("%q: expression %q, want %q", c.expression, s.Expression, c.normalised)
		}
	}
}

func span(low, high int) []int {
	out := []int{}
	for v := low; v <= high; v++ {
		out = append(out, v)
	}
	return out
}

func TestParseErrorsNameTheFieldAndTheProblem(t *testing.T) {
	cases := map[string]string{
		"":                "expected 5 fields",
		"* * * *":         "expected 5 fields (minute hour day-of-month month day-of-week), got 4",
		"60 * * * *":      `minute field "60": 60 is out of range 0-59`,
		"* 24 * * *":      `hour field "24": 24 is out of range 0-23`,
		"* * 0 * *":       `day-of-month field "0": 0 is out of range 1-31`,
		"* * * FOO *":     `month field "FOO": "FOO" is neither a number nor one of JAN FEB`,
		"* * * * 1-":      `day-of-week field "1-": "" is neither a number nor one of SUN`,
		"*/0 * * * *":     `minute field "*/0": step "0" is not a positive whole number`,
		"5-1 * * * *":     "range 5-1 runs backwards",
		"1,,2 * * * *":    "empty list item",
		"? * * * *":       `minute field "?": "?" is not a number`,
		"* * * * 7/2":     `day-of-week field "7/2": 7/2 names no value`,
		"0 0 30 2 *":      "never runs: day 30 of the month does not occur in February",
		"0 0 31 4,6 *":    "never runs: day 31 of the month does not occur in April or June",
		"@reboot":         "@reboot runs when a machine starts",
		"@fortnightly":    `unknown macro "@fortnightly"`,
		"0 0 0 0 0 0 0 0": "got 8",
	}
	for expression, want := range cases {
		_, err := Parse(expression)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", expression, err, want)
		}
	}
}

func TestRunsInUTC(t *testing.T) {
	got := runs(t, "*/15 9-17 * * MON-FRI", "UTC", "2026-11-27T17:31:10Z", 3) // a Friday
	want := []string{"2026-11-27T17:45:00Z", "2026-11-30T09:00:00Z", "2026-11-30T09:15:00Z"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	// `after` is exclusive, to the minute.
	if got := runs(t, "0 9 * * *", "UTC", "2026-01-01T09:00:00Z", 1); got[0] != "2026-01-02T09:00:00Z" {
		t.Errorf("exclusive start: %v", got)
	}
	if got := runs(t, "0 9 * * *", "UTC", "2026-01-01T08:59:59.999Z", 1); got[0] != "2026-01-01T09:00:00Z" {
		t.Errorf("seconds before the minute: %v", got)
	}
}

func TestLeapDaysAndRareDays(t *testing.T) {
	want := []string{"2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z", "2036-02-29T00:00:00Z"}
	if got := runs(t, "0 0 29 2 *", "UTC", "2026-03-01T00:00:00Z", 3); !reflect.DeepEqual(got, want) {
		t.Errorf("leap days: %v", got)
	}
	// 2100 is not a leap year: eight years between two 29 Februaries.
	if got := runs(t, "0 0 29 2 *", "UTC", "2096-03-01T00:00:00Z", 1); got[0] != "2104-02-29T00:00:00Z" {
		t.Errorf("across 2100: %v", got)
	}
	// Both day fields restricted: either matches (1 March 2026 is a Sunday, 2 March a Monday).
	want = []string{"2026-03-01T00:00:00Z", "2026-03-02T00:00:00Z", "2026-03-09T00:00:00Z"}
	if got := runs(t, "0 0 1 * MON", "UTC", "2026-02-28T00:00:00Z", 3); !reflect.DeepEqual(got, want) {
		t.Errorf("day of month or day of week: %v", got)
	}
	// Day of month starting with `*`: both must match (odd days that are Mondays).
	want = []string{"2026-03-09T00:00:00Z", "2026-03-23T00:00:00Z", "2026-04-13T00:00:00Z"}
	if got := runs(t, "0 0 */2 * MON", "UTC", "2026-02-28T00:00:00Z", 3); !reflect.DeepEqual(got, want) {
		t.Errorf("day of month and day of week: %v", got)
	}
}

func TestRareDays(t *testing.T) {
	// "*/29" is days 1 and 30, and starting with `*` it must match together with the
	// weekday: 1 February on a Monday, once in several years.
	want := []string{"2027-02-01T00:00:00Z", "2038-02-01T00:00:00Z"}
	if got := runs(t, "0 0 */29 2 MON", "UTC", "2026-01-01T00:00:00Z", 2); !reflect.DeepEqual(got, want) {
		t.Errorf("rare: %v", got)
	}
}

func TestDaylightSavingChanges(t *testing.T) {
	// Berlin: clocks go forward 2026-03-29 02:00 -> 03:00, back 2026-10-25 03:00 -> 02:00.
	want := []string{"2026-03-28T02:30:00+01:00", "2026-03-30T02:30:00+02:00"}
	if got := runs(t, "30 2 * * *", "Europe/Berlin", "2026-03-28T00:00:00Z", 2); !reflect.DeepEqual(got, want) {
		t.Errorf("a skipped time does not run: %v", got)
	}
	want = []string{"2026-10-25T02:30:00+02:00", "2026-10-26T02:30:00+01:00"}
	if got := runs(t, "30 2 * * *", "Europe/Berlin", "2026-10-24T12:00:00Z", 2); !reflect.DeepEqual(got, want) {
		t.Errorf("a repeated time runs once: %v", got)
	}
	want = []string{"2026-10-25T01:45:00+02:00", "2026-10-25T02:00:00+02:00", "2026-10-25T02:15:00+02:00",
		"2026-10-25T02:30:00+02:00", "2026-10-25T02:45:00+02:00", "2026-10-25T03:00:00+01:00"}
	if got := runs(t, "*/15 * * * *", "Europe/Berlin", "2026-10-24T23:40:00Z", 6); !reflect.DeepEqual(got, want) {
		t.Errorf("the repeated hour is not listed twice: %v", got)
	}
	// A search that starts inside the repeated hour lists what is left of it.
	want = []string{"2026-10-25T02:45:00+01:00", "2026-10-25T03:00:00+01:00"}
	if got := runs(t, "*/15 * * * *", "Europe/Berlin", "2026-10-25T01:40:00Z", 2); !reflect.DeepEqual(got, want) {
		t.Errorf("from inside the repeated hour: %v", got)
	}
	// Kathmandu is UTC+05:45: local hours do not start on UTC hours.
	want = []string{"2026-06-01T09:00:00+05:45", "2026-06-02T09:00:00+05:45"}
	if got := runs(t, "0 9 * * *", "Asia/Kathmandu", "2026-06-01T00:00:00Z", 2); !reflect.DeepEqual(got, want) {
		t.Errorf("Kathmandu: %v", got)
	}
}

func TestMatches(t *testing.T) {
	s := mustParse(t, "0 9 * * MON-FRI")
	berlin := mustZone(t, "Europe/Berlin")
	if !s.Matches(at(t, "2026-11-23T08:00:42Z"), berlin) {
		t.Error("09:00:42 Berlin on a Monday matches")
	}
	if s.Matches(at(t, "2026-11-23T09:00:00Z"), berlin) || s.Matches(at(t, "2026-11-22T08:00:00Z"), berlin) {
		t.Error("10:00 Berlin, and a Sunday, do not")
	}
}

func TestDescriptions(t *testing.T) {
	cases := map[string]string{
		"* * * * *":             "Every minute",
		"*/15 * * * *":          "Every 15 minutes",
		"*/15 9-17 * * MON-FRI": "Every 15 minutes of hours 9 through 17, on Monday through Friday",
		"0 9,17 * * 1-5":        "At 09:00 and 17:00, on Monday through Friday",
		"30 2 * * *":            "At 02:30",
		"5 * * * *":             "At minute 5 past every hour",
		"0,25,40 */2 * * *":     "At minutes 0, 25 and 40 of every 2 hours",
		"0,20,40 9-17 * * *":    "Every 20 minutes of hours 9 through 17",
		"* 3 * * *":             "Every minute of hour 3",
		"@yearly":               "At 00:00, on day 1 of the month, in January",
		"0 0 1,15 * *":          "At 00:00, on days 1 and 15 of the month",
		"0 0 */2 * *":           "At 00:00, on every 2nd day of the month",
		"0 0 1 * MON":           "At 00:00, on day 1 of the month and on every Monday",
		"0 0 */2 * MON,FRI":     "At 00:00, on every 2nd day of the month if it is a Monday or Friday",
		"0 12 * JUN-AUG SAT,0":  "At 12:00, on Sunday and Saturday, in June through August",
	}
	for expression, want := range cases {
		if got := mustParse(t, expression).Describe(); got != want {
			t.Errorf("%q: %q, want %q", expression, got, want)
		}
	}
}

func TestZones(t *testing.T) {
	for _, name := range []string{"", "Local", "local", "Mars/Olympus_Mons"} {
		if _, err := LoadZone(name); err == nil {
			t.Errorf("LoadZone(%q) succeeded", name)
		}
	}
	for _, name := range []string{"UTC", "Europe/Berlin", "America/Argentina/Buenos_Aires", "Etc/GMT+5"} {
		if _, err := LoadZone(name); err != nil {
			t.Errorf("LoadZone(%q): %v", name, err)
		}
	}
}
