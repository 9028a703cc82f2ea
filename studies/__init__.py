"""Studies: runs of many deals that are stored, resumed and summed up with honest intervals.

`runner` plays a run's chunks in worker processes into `store`; `study` lists
the runs of the default study; `progress` shows a long run as it goes; `stats`
holds the intervals and tests every figure is reported with.
"""
