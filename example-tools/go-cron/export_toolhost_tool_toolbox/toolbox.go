// Package export_toolhost_tool_toolbox is the cron toolbox: when a cron expression runs
// (in any IANA time zone, daylight saving included), what it means in English, and
// whether it fires at a given time. The bindings generated from wit/tool.wit call
// ListTools once per load and Call for every call; the cron logic is in ../cron.
package export_toolhost_tool_toolbox

import (
	"fmt"
	"time"

	"wit_component/cron"
	"wit_component/toolhost_tool_host"
)

// configZone is the key of the operator's default time zone in the manifest's
// `[grants] config` table.
const configZone = "timezone"

// Schema fragments shared by the tools.
const (
	expressionSchema = `{"type":"string","minLength":1,"maxLength":200,` +
		`"description":"Five fields: minute hour day-of-month month day-of-week. Each is *, N, A-B, */STEP, ` +
		`A-B/STEP or a comma-separated list of those; months may be JAN-DEC and days SUN-SAT (0 and 7 are ` +
		`Sunday). Or one of @hourly, @daily, @midnight, @weekly, @monthly, @yearly, @annually."}`
	timezoneSchema = `{"type":"string","minLength":1,"maxLength":64,"pattern":"^[A-Za-z][A-Za-z0-9_+/-]*$",` +
		`"description":"IANA time zone, such as Europe/Berlin or America/New_York. Default: the zone the ` +
		`operator configured, else UTC."}`
	timeSchema = `{"type":"string",` +
		`"pattern":"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]+)?)?(Z|[+-][0-9]{2}:[0-9]{2})$"`
	weekdaySchema = `{"enum":["Sunday","Monday","Tuesday","Wednesday","Thursday","Friday","Saturday"]}`
	zoneOutput    = `"timezone":{"type":"string"},"timezone_from":{"enum":["input","config","default"]}`
)

var nextRunsInput = `{"type":"object","properties":{` +
	`"expression":` + expressionSchema + `,` +
	`"timezone":` + timezoneSchema + `,` +
	`"after":` + timeSchema + `,"description":"RFC 3339 time to start after (exclusive). Default: now."},` +
	`"count":{"type":"integer","minimum":1,"maximum":100,"default":5,"description":"How many runs to list."}},` +
	`"required":["expression"],"additionalProperties":false}`

var nextRunsOutput = `{"type":"object","properties":{` +
	`"expression":{"type":"string","description":"The five fields, macros expanded."},` + zoneOutput + `,` +
	`"runs":{"type":"array","items":{"type":"object","properties":{` +
	`"time":{"type":"string","description":"RFC 3339, in the time zone."},` +
	`"utc":{"type":"string","description":"The same instant in UTC."},` +
	`"weekday":` + weekdaySchema + `},"required":["time","utc","weekday"],"additionalProperties":false}}},` +
	`"required":["expression","timezone","timezone_from","runs"],"additionalProperties":false}`

var explainInput = `{"type":"object","properties":{"expression":` + expressionSchema + `},` +
	`"required":["expression"],"additionalProperties":false}`

func valuesSchema(min, max int) string {
	return fmt.Sprintf(`{"type":"array","items":{"type":"integer","minimum":%d,"maximum":%d}}`, min, max)
}

var explainOutput = `{"type":"object","properties":{` +
	`"expression":{"type":"string"},"description":{"type":"string"},` +
	`"day_rule":{"enum":["any","day_of_month","day_of_week","both","either"],` +
	`"description":"How the day fields combine: both must match when either starts with *, else either may."},` +
	`"fields":{"type":"object","properties":{` +
	`"minute":` + valuesSchema(0, 59) + `,"hour":` + valuesSchema(0, 23) + `,` +
	`"day_of_month":` + valuesSchema(1, 31) + `,"month":` + valuesSchema(1, 12) + `,` +
	`"day_of_week":` + valuesSchema(0, 6) + `},` +
	`"required":["minute","hour","day_of_month","month","day_of_week"],"additionalProperties":false}},` +
	`"required":["expression","description","day_rule","fields"],"additionalProperties":false}`

var matchesInput = `{"type":"object","properties":{` +
	`"expression":` + expressionSchema + `,` +
	`"time":` + timeSchema + `,"description":"RFC 3339 time to test; seconds are ignored."},` +
	`"timezone":` + timezoneSchema + `},` +
	`"required":["expression","time"],"additionalProperties":false}`

var matchesOutput = `{"type":"object","properties":{"matches":{"type":"boolean"},` +
	`"time":{"type":"string","description":"The time on the zone's wall clock."},` + zoneOutput + `},` +
	`"required":["matches","time","timezone","timezone_from"],"additionalProperties":false}`

var tools = []tool{
	newTool("next_runs",
		"Lists the next times a cron expression runs, after a given time or now, on the wall clock of an "+
			"IANA time zone with its daylight-saving changes (a skipped time does not run, a repeated one "+
			"runs once).",
		nextRunsInput, nextRunsOutput, nextRuns),
	newTool("explain",
		"Explains a cron expression: an English description, the values each field allows, and how its "+
			"day-of-month and day-of-week fields combine.",
		explainInput, explainOutput, explain),
	newTool("matches",
		"Tells whether a cron expression fires in the minute of a given time, in an IANA time zone.",
		matchesInput, matchesOutput, matches),
}

func parse(expression string) (*cron.Schedule, error) {
	schedule, err := cron.Parse(expression)
	if err != nil {
		return nil, invalidInput("%v", err)
	}
	return schedule, nil
}

// zone resolves the time zone of a call: the input's, else the operator's configured
// default, else UTC; and says which it was.
func zone(requested *string) (*time.Location, string, error) {
	if requested != nil {
		loc, err := cron.LoadZone(*requested)
		if err != nil {
			return nil, "", invalidInput("%v", err)
		}
		return loc, "input", nil
	}
	configured := toolhost_tool_host.Config(configZone)
	if configured.IsSome() {
		loc, err := cron.LoadZone(configured.Some())
		if err != nil {
			// The caller did nothing wrong: the operator's configuration is broken.
			return nil, "", fmt.Errorf("the operator's configured time zone (config %q) is unusable: %v", configZone, err)
		}
		toolhost_tool_host.Log(toolhost_tool_host.LogLevel_Debug, "time zone from config: "+loc.String())
		return loc, "config", nil
	}
	return time.UTC, "default", nil
}

func parseTime(field, text string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04Z07:00"} {
		if t, err := time.Parse(layout, text); err == nil {
			return t, nil
		}
	}
	return time.Time{}, invalidInput("%s: %q is not a valid RFC 3339 time", field, text)
}

type run struct {
	Time    string `json:"time"`
	UTC     string `json:"utc"`
	Weekday string `json:"weekday"`
}

type nextRunsIn struct {
	Expression string  `json:"expression"`
	Timezone   *string `json:"timezone"`
	After      *string `json:"after"`
	Count      *int    `json:"count"`
}

type nextRunsOut struct {
	Expression   string `json:"expression"`
	Timezone     string `json:"timezone"`
	TimezoneFrom string `json:"timezone_from"`
	Runs         []run  `json:"runs"`
}

func nextRuns(in nextRunsIn) (nextRunsOut, error) {
	schedule, err := parse(in.Expression)
	if err != nil {
		return nextRunsOut{}, err
	}
	loc, from, err := zone(in.Timezone)
	if err != nil {
		return nextRunsOut{}, err
	}
	after := time.Now()
	if in.After != nil {
		if after, err = parseTime("after", *in.After); err != nil {
			return nextRunsOut{}, err
		}
	}
	count := 5
	if in.Count != nil {
		count = *in.Count
	}
	times, err := schedule.Runs(after, loc, count)
	if err != nil {
		// Runs fails only for a schedule with no time at all: the caller's expression.
		return nextRunsOut{}, invalidInput("%v", err)
	}
	runs := make([]run, len(times))
	for i, t := range times {
		runs[i] = run{t.Format(time.RFC3339), t.UTC().Format(time.RFC3339), t.Weekday().String()}
	}
	return nextRunsOut{schedule.Expression, loc.String(), from, runs}, nil
}

type explainIn struct {
	Expression string `json:"expression"`
}

type explainOut struct {
	Expression  string      `json:"expression"`
	Description string      `json:"description"`
	DayRule     string      `json:"day_rule"`
	Fields      cron.Fields `json:"fields"`
}

func explain(in explainIn) (explainOut, error) {
	schedule, err := parse(in.Expression)
	if err != nil {
		return explainOut{}, err
	}
	return explainOut{schedule.Expression, schedule.Describe(), schedule.DayRule(), schedule.Fields()}, nil
}

type matchesIn struct {
	Expression string  `json:"expression"`
	Time       string  `json:"time"`
	Timezone   *string `json:"timezone"`
}

type matchesOut struct {
	Matches      bool   `json:"matches"`
	Time         string `json:"time"`
	Timezone     string `json:"timezone"`
	TimezoneFrom string `json:"timezone_from"`
}

func matches(in matchesIn) (matchesOut, error) {
	schedule, err := parse(in.Expression)
	if err != nil {
		return matchesOut{}, err
	}
	loc, from, err := zone(in.Timezone)
	if err != nil {
		return matchesOut{}, err
	}
	t, err := parseTime("time", in.Time)
	if err != nil {
		return matchesOut{}, err
	}
	return matchesOut{schedule.Matches(t, loc), t.In(loc).Format(time.RFC3339), loc.String(), from}, nil
}
