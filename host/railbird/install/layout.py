"""Where an installation's files live under its root (`railbird setup --root DIR`).

Every path a written file names is the root-joined one, so an installation under a
temporary root refers to its own files and runs as it is (the tests start its broker and
check its host config); with the root `/` they are the usual system paths.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

SERVICE_USER = "railbird"


@dataclass(frozen=True)
class Layout:
    root: Path

    @property
    def system(self) -> bool:
        """The real system (`/`): users, packages and ownership are changed too."""
        return self.root == Path("/")

    @property
    def etc(self) -> Path:
        return self.root / "etc" / "railbird"

    @property
    def host_toml(self) -> Path:
        return self.etc / "host.toml"

    @property
    def mosquitto_conf(self) -> Path:
        return self.etc / "mosquitto.conf"

    @property
    def passwd(self) -> Path:
        return self.etc / "passwd"

    @property
    def acl(self) -> Path:
        return self.etc / "acl"

    @property
    def secrets(self) -> Path:
        return self.etc / "secrets.toml"

    @property
    def choices(self) -> Path:
        return self.etc / "setup.json"

    @property
    def nodes(self) -> Path:
        return self.etc / "nodes"

    def node_json(self, node: str) -> Path:
        return self.nodes / f"{node}.json"

    @property
    def venue_key(self) -> Path:
        """The venue key (railbird.venuekey): signs updates and configs; root's, 0600."""
        return self.etc / "venue-key.pem"

    @property
    def venue_key_pub(self) -> Path:
        """Its public part, as boards keep it (config.json `venue_key`)."""
        return self.etc / "venue-key.pub"

    @property
    def tls(self) -> Path:
        return self.etc / "tls"

    @property
    def state(self) -> Path:
        return self.root / "var" / "lib" / "railbird"

    @property
    def broker_state(self) -> Path:
        return self.state / "mosquitto"

    @property
    def journal(self) -> Path:
        return self.state / "journal.sqlite"

    @property
    def units(self) -> Path:
        return self.root / "etc" / "systemd" / "system"

    def show(self, path: Path) -> str:
        """`path` as the user sees it: absolute (it is what the files name)."""
        return str(path)
