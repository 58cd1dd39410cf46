"""The host's TOML configuration (docs/host.md lists every key). Lives here: `model` (the
typed `Config` and its parts, `load` and `from_dict`, the host's client id, the masked copy
that is journalled; its docstring is the annotated example), `schema` (the keys as a JSON
Schema and the secrets; `python -m railbird.config.schema --markdown` writes docs/host.md's
reference) and `check` (the rules across keys, and weak referee PINs). May import
`railbird.core` (`ShotParams`, the table sizes and cue-ball returns in `core.shots`, the
table's dimensions in `core.railballs`), `railbird.rules` (the games, their options and
break orders), `railbird.tableorder` (the tables an error lists) and the standard library;
never the daemon, the outputs or the commands, which all import it. This `__init__`
re-exports `model`'s public names, so `from railbird.config import Config, load` stays the
way to read a config.
"""

from railbird.config.model import (
    BrokerConfig,
    ClusterConfig,
    Config,
    ConfigError,
    FeedsConfig,
    OutputsConfig,
    SerialConfig,
    TableConfig,
    WebConfig,
    from_dict,
    host_client_id,
    load,
    masked,
)

__all__ = [
    "BrokerConfig",
    "ClusterConfig",
    "Config",
    "ConfigError",
    "FeedsConfig",
    "OutputsConfig",
    "SerialConfig",
    "TableConfig",
    "WebConfig",
    "from_dict",
    "host_client_id",
    "load",
    "masked",
]
