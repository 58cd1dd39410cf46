"""`JournalError`: a file that cannot be used as a journal. A module of its own because both
the journal (`railbird.daemon.journal`, which re-exports it) and its schema steps
(`railbird.daemon.migrations`) raise it, and the journal imports the migrations: with the
class in the journal, the migrations imported the journal back (an import circle).
"""

from __future__ import annotations


class JournalError(Exception):
    """The file cannot be used as a journal; the message is one line for the user."""
