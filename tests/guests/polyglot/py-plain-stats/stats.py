"""Summary statistics, the way other hosts' Python examples are written: a plain
`componentize-py` component with one exported function, no toolhost contract."""

import statistics

from componentize_py_types import Err
import wit_world


class WitWorld(wit_world.WitWorld):
    def summarize(self, numbers):
        if not numbers:
            raise Err("there are no numbers to summarize")
        stdev = statistics.stdev(numbers) if len(numbers) > 1 else None
        return wit_world.Summary(
            count=len(numbers),
            mean=statistics.fmean(numbers),
            median=float(statistics.median(numbers)),
            stdev=stdev,
        )
