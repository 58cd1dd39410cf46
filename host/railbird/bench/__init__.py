"""The host's benchmarks (docs/performance.md), run by hand, not part of `make test`. Lives
here: `suite` (`make bench`, `python -m railbird.bench` through `__main__`: in-process and
end-to-end throughput against their baselines, the end-to-end floor, in play, restart),
`subscriber` (the bare host MQTT subscriber the baselines and the floor use), `publisher`
(the nodes' publisher of the end-to-end runs, in a process of its own), `history`
(sign-in and the daemon's memory while clients walk a year of history and others never read
their answers), `year` (that year: a busy venue's history tables, written once and cached;
the history tests use it too), `inplay` (a
pocketed ball's latency from the simulated node to the web board), `screens` (the same to
each of the five screens: phone, table page, venue board, overlay, LED board), `chromium`
(the headless Chromium launch it shares with the display tests), `journal` (the cached
1,000,000-event journal of realistic play the restart benchmark opens) and `scale` (`make
bench-scale`, `python -m railbird.bench.scale`: one host process against N simulated
tables). May import any part of `railbird` it measures (config, core, daemon, outputs,
broker, sim, install), `rbproto`, paho-mqtt, selenium (Chromium), the node firmware `rbnode`
and the scoreboard firmware; nothing imports
it but the tests. This `__init__` imports nothing, so a test can import one benchmark alone.
"""
