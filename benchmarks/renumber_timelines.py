"""attack15: CPU of one windowed timeline read (``Episode.timeline_rows``, a 2-day window before the cutoff, as
Curated Input reads) of each table naming hosp.poe / hosp.emar rows, and labevents as a control, MIMIC-IV demo
patient 10035631 at two cutoffs, min of 3 reps. Run it with two checkouts on a store each ingested (compare
commits on stores their own code wrote: the row-instants record differs between them):

    .venv/bin/python benchmarks/renumber_timelines.py STORE
"""
import collections
import datetime as dt
import sys
import time
from pathlib import Path

from clinseek.episode import EpisodeKey, build_episode, open_store_reader

S=Path(sys.argv[1])
tabs=["hosp.poe","hosp.poe_detail","hosp.prescriptions","hosp.pharmacy","hosp.emar","hosp.emar_detail","hosp.labevents"]
res=collections.defaultdict(list)
with open_store_reader(S) as reader:
    for rep in range(3):
      for cut in [dt.datetime(2115,11,20), dt.datetime(2115,12,9)]:
        with build_episode(reader, EpisodeKey(10035631, cut), queries=False) as ep:
            for t in tabs:
                c0=time.process_time(); ep.timeline_rows(t.split('.')[1], since=cut-dt.timedelta(days=2), until=cut); res[(t,cut.day)].append((time.process_time()-c0)*1000)
print(" ".join(f"{t.split('.')[1]}@{d}={min(v):.1f}" for (t,d),v in res.items()))
