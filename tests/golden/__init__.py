"""The golden pipeline corpus: raw input streams (corpus/) and the records and journal
rows they must give, replayed byte for byte by test_golden.py; make_golden.py regenerates
them (README.md). May import `railbird` (config, core, daemon, sim in the generator only)
and `rbproto`; the test itself reads only the corpus files, canon.py and replay.py.
"""
