"""Checks on the repository as a whole: the host's import graph (no circle, no I/O in the
core), a self-contained clone (no reference to a file it lacks, a licence, no committed
build artefact) and an opening paragraph in every folder. They read files and git's list of
them and may import only the standard library and pytest, never the code they check.
"""
