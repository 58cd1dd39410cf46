"""Whether the node may obey a command from the host (protocol/SPEC.md "Signed commands"):
the one place that says no to an `update` or a `config` that is not the venue's.

`Trust(dev)` takes the board's config.json: `venue_key` (the venue key's public part, which
`railbird node provision` writes; rbproto.signing.public_key) and the node's identity. Each
check returns None (obey) or the reason for the refusal, which the caller counts
(`update_rejected`, `config_rejected`) and reports (`status.update.error`,
`status.config_error`); nothing is applied.

- A retained `update` or `config` is refused whatever it says: the host never retains
  either, so a retained one is stale or not the host's, and would be obeyed again after
  every reconnect, power cut or re-flash.
- With a venue key, an update whose set (version, manifest SHA-256) or a config that the
  key did not sign is refused: a right hash is not enough, since the hash travels in the
  same session as the command.
- An update to an older version than the running one (rbproto.signing.version_key) is
  refused unless it carries a `downgrade` for this boot of this node from the running
  version, which the key signed with it (the owner forced it; the host journals who,
  when, from and to).
A board without a venue key (provisioned before there was one, the demo's simulated
tables) takes unsigned commands; the version order and the retained refusal hold there too.
"""

from rbproto import signing

RETAINED_UPDATE = "refused: a retained update"
RETAINED_CONFIG = "refused: a retained config"


class Trust:
    def __init__(self, dev):
        self.venue = dev["venue"]
        self.table = dev["table"]
        self.node = dev["node"]
        key = dev.get("venue_key")
        # a key that does not parse refuses everything (0 is below every signature): a
        # board meant to check must never fall back to trusting
        self.key = None if key is None else (signing.public_key(key) or 0)

    @property
    def required(self):
        return self.key is not None

    def _sig(self, what, statement, sig):
        if self.key is None:
            return None
        if sig is None:
            return "refused: unsigned %s (this board takes only the venue key's)" % what
        if not signing.verify(self.key, statement, sig):
            return "refused: %s signature is not the venue key's" % what
        return None

    def update(self, cmd, retained, boot, running):
        """A decoded `update` -> None or the reason it is refused. running: the version
        this boot runs."""
        if retained:
            return RETAINED_UPDATE
        dg = cmd.get("downgrade")
        bound = None
        if dg is not None:
            bound = (self.venue, self.table, self.node, dg["boot"], dg["from"])
        why = self._sig("update", signing.update_statement(
            cmd["version"], cmd["manifest_sha256"], bound), cmd.get("sig"))
        if why is not None:
            return why
        v = cmd["version"]
        if running is not None and signing.older(v, running):
            if dg is None:
                return ("refused: %s is older than the running %s (the owner forces a "
                        "downgrade)" % (v, running))[:200]
            if dg["boot"] != boot or dg["from"] != running:
                return ("refused: the downgrade was forced for boot %d from %s, this is "
                        "boot %d running %s" % (dg["boot"], dg["from"], boot, running))[:200]
        return None

    def config(self, msg, retained):
        """A decoded `config` -> None or the reason it is refused."""
        if retained:
            return RETAINED_CONFIG
        return self._sig("config", signing.config_statement(
            self.venue, self.table, self.node, msg), msg.get("sig"))
