"""Studies: runs of many deals that are stored, resumed and summed up with honest intervals.

`runner` orchestrates one run (`spec`: what it is; `plan`: which deals, in what chunks; `backends`: where the
chunks play; `chunks`: what a worker does with one; `reuse`, `watchdog`, `manifests`) into the results `store`
(`rows`: the chunk file format; `records`, `swap`: its operations on a key's records and a forced run's swap;
`files`; `reading`: the rows read back); `study` lists the runs of the default study; `progress` shows a long
run as it goes; `stats` holds the intervals and tests every figure is reported with.
"""
