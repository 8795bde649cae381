package cron

import (
	"fmt"
	"strings"
	"time"
	// A sandboxed tool has no /usr/share/zoneinfo: the IANA database is linked in
	// instead (about 450 KB), so every zone is known wherever the tool runs.
	_ "time/tzdata"
)

// LoadZone returns the IANA time zone `name` ("Europe/Berlin", "UTC").
func LoadZone(name string) (*time.Location, error) {
	if name == "" || strings.EqualFold(name, "Local") {
		// time.LoadLocation takes both to mean the machine's own zone, which a
		// sandboxed tool does not know (it would be UTC).
		return nil, fmt.Errorf("time zone %q does not name a place: use an IANA name such as Europe/Berlin", name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q: use an IANA name such as Europe/Berlin or America/New_York", name)
	}
	return loc, nil
}
