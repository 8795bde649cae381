"""py_dates: calendar arithmetic for agents, which tend to miscount days, weekdays and
month ends. Standard library only.

Built with componentize-py: see docs/guides/python.md. Every value that crosses the
boundary is JSON text; the host has checked the input against the schema of the tool
before `call` runs, so only input that fits it arrives here.
"""

import calendar
import datetime
import json

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports import host, types

SCHEMA = "https://json-schema.org/draft/2020-12/schema"
DATE = {
    "type": "string",
    "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
    "description": "A calendar date, ISO 8601 `YYYY-MM-DD` (years 0001-9999).",
}
WEEKDAY = {"type": "string", "enum": list(calendar.day_name)}


def obj(properties, required=None, **extra):
    """A JSON Schema object with exactly these properties."""
    schema = {"type": "object", "properties": properties, "additionalProperties": False}
    schema["required"] = list(properties) if required is None else required
    schema.update(extra)
    return schema


class InvalidInput(Exception):
    """Input that fits the schema but makes no sense; reported as `invalid-input`."""


def parse_date(field, text):
    try:
        return datetime.date.fromisoformat(text)
    except ValueError as error:
        raise InvalidInput(f"`{field}` {text!r} is not a valid date: {error}") from None


def shifted(date, days):
    try:
        return date + datetime.timedelta(days=days)
    except OverflowError:
        raise InvalidInput("the result falls outside the years 0001-9999") from None


def business_days_between(start, end):
    """Monday-to-Friday days in [start, end) (negative when end is before start)."""
    if end < start:
        return -business_days_between(end, start)
    weeks, rest = divmod((end - start).days, 7)
    count = weeks * 5
    for offset in range(rest):
        if (start.weekday() + offset) % 7 < 5:
            count += 1
    return count


def calendar_difference(start, end):
    """Whole years, months and days from start to end (end >= start)."""
    months = (end.year - start.year) * 12 + end.month - start.month
    if end.day < start.day:
        months -= 1
    anchor = add_months_clamped(start, months)[0]
    return {"years": months // 12, "months": months % 12, "days": (end - anchor).days}


def add_months_clamped(date, months):
    index = date.year * 12 + date.month - 1 + months
    year, month = divmod(index, 12)
    if not 1 <= year <= 9999:
        raise InvalidInput("the result falls outside the years 0001-9999")
    last = calendar.monthrange(year, month + 1)[1]
    return datetime.date(year, month + 1, min(date.day, last)), date.day > last


def describe(date):
    iso = date.isocalendar()
    return {
        "date": date.isoformat(),
        "weekday": calendar.day_name[date.weekday()],
        "iso_weekday": iso.weekday,
        "iso_week": iso.week,
        "iso_year": iso.year,
        "day_of_year": date.timetuple().tm_yday,
        "quarter": (date.month - 1) // 3 + 1,
        "days_in_month": calendar.monthrange(date.year, date.month)[1],
        "is_leap_year": calendar.isleap(date.year),
    }


def days_between(args):
    start = parse_date("start", args["start"])
    end = parse_date("end", args["end"])
    early, late = sorted((start, end))
    return {
        "days": (end - start).days,
        "business_days": business_days_between(start, end),
        "calendar": calendar_difference(early, late),
    }


def add_days(args):
    date = parse_date("date", args["date"])
    days = args["days"]
    if not args.get("business_days", False):
        result = shifted(date, days)
    else:
        result, step, left = date, (1 if days >= 0 else -1), abs(days)
        while left:
            result = shifted(result, step)
            if result.weekday() < 5:
                left -= 1
    return {"date": result.isoformat(), "weekday": calendar.day_name[result.weekday()]}


def add_months(args):
    date = parse_date("date", args["date"])
    result, clamped = add_months_clamped(date, args["months"])
    return {"date": result.isoformat(), "weekday": calendar.day_name[result.weekday()], "clamped": clamped}


def weekday(args):
    return describe(parse_date("date", args["date"]))


def today(args):
    offset = args.get("utc_offset_minutes", 0)
    now = datetime.datetime.now(datetime.timezone.utc)
    if now.year < 2000:
        # The host's wall clock is not a real clock: better to fail than to mislead.
        raise RuntimeError(f"the clock reads {now.isoformat()}, which cannot be the current time")
    local = now + datetime.timedelta(minutes=offset)
    return {
        **describe(local.date()),
        "time": local.strftime("%H:%M:%S"),
        "utc": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "unix_seconds": int(now.timestamp()),
    }


DESCRIBED = {
    "date": {"type": "string", "description": "YYYY-MM-DD"},
    "weekday": WEEKDAY,
    "iso_weekday": {"type": "integer", "minimum": 1, "maximum": 7, "description": "1 = Monday … 7 = Sunday."},
    "iso_week": {"type": "integer", "minimum": 1, "maximum": 53},
    "iso_year": {"type": "integer", "description": "The ISO week-numbering year, which can differ near 1 January."},
    "day_of_year": {"type": "integer", "minimum": 1, "maximum": 366},
    "quarter": {"type": "integer", "minimum": 1, "maximum": 4},
    "days_in_month": {"type": "integer", "minimum": 28, "maximum": 31},
    "is_leap_year": {"type": "boolean"},
}

MAX_DAYS = 3_652_059  # 0001-01-01 to 9999-12-31

TOOLS = {
    "days_between": (
        days_between,
        "Counts the days from `start` to `end` (negative when `end` is earlier), the Monday-to-Friday "
        "business days among them (start included, end excluded), and the difference in whole years, "
        "months and days.",
        obj({"start": DATE, "end": DATE}),
        obj(
            {
                "days": {"type": "integer"},
                "business_days": {"type": "integer", "description": "Weekdays in [start, end); no holidays."},
                "calendar": obj(
                    {
                        "years": {"type": "integer", "minimum": 0},
                        "months": {"type": "integer", "minimum": 0, "maximum": 11},
                        "days": {"type": "integer", "minimum": 0, "maximum": 30},
                    }
                ),
            }
        ),
    ),
    "add_days": (
        add_days,
        "Adds a number of days (negative to go back) to a date. With `business_days`, counts only "
        "Monday to Friday, so a Friday plus 1 business day is the next Monday.",
        obj(
            {
                "date": DATE,
                "days": {"type": "integer", "minimum": -MAX_DAYS, "maximum": MAX_DAYS},
                "business_days": {"type": "boolean", "default": False, "description": "Skip Saturdays and Sundays."},
            },
            required=["date", "days"],
        ),
        obj({"date": DATE, "weekday": WEEKDAY}),
    ),
    "add_months": (
        add_months,
        "Adds calendar months (negative to go back) to a date. A day that does not exist in the target "
        "month is clamped to its last day (2024-01-31 + 1 month = 2024-02-29) and `clamped` says so.",
        obj({"date": DATE, "months": {"type": "integer", "minimum": -120_000, "maximum": 120_000}}),
        obj({"date": DATE, "weekday": WEEKDAY, "clamped": {"type": "boolean"}}),
    ),
    "weekday": (
        weekday,
        "Tells the weekday of a date, with its ISO week, day of the year, quarter, the length of its month "
        "and whether its year is a leap year.",
        obj({"date": DATE}),
        obj(DESCRIBED),
    ),
    "today": (
        today,
        "Today's date and time from the host's clock, at a UTC offset (default UTC), with the same "
        "calendar facts as `weekday`.",
        obj(
            {
                "utc_offset_minutes": {
                    "type": "integer",
                    "minimum": -1080,
                    "maximum": 1080,
                    "default": 0,
                    "description": "Minutes east of UTC: 60 for CET, -300 for EST, 330 for IST.",
                }
            },
            required=[],
        ),
        obj(
            {
                **DESCRIBED,
                "time": {"type": "string", "pattern": "^[0-9]{2}:[0-9]{2}:[0-9]{2}$"},
                "utc": {"type": "string", "description": "The current UTC time, ISO 8601."},
                "unix_seconds": {"type": "integer"},
            }
        ),
    ),
}


def schema_text(schema):
    return json.dumps({"$schema": SCHEMA, **schema})


class Toolbox(exports.Toolbox):
    def list_tools(self):
        return [
            types.ToolInfo(name, description, schema_text(input_schema), schema_text(output_schema))
            for name, (_, description, input_schema, output_schema) in TOOLS.items()
        ]

    def call(self, tool, input):
        """Returns the output as JSON text, or raises `Err(ToolError_InvalidInput(...))` or
        `Err(ToolError_Failed(...))`."""
        entry = TOOLS.get(tool)
        if entry is None:
            raise Err(types.ToolError_Failed(f"no tool named {tool} in this toolbox"))
        try:
            return json.dumps(entry[0](json.loads(input)))
        except InvalidInput as error:
            raise Err(types.ToolError_InvalidInput(str(error)))
        except Exception as error:
            host.log(host.LogLevel.ERROR, f"{tool} failed: {error!r}")
            raise Err(types.ToolError_Failed(str(error)))
