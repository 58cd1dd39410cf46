"""Sub-commands of `railbird`; one module each, discovered by `railbird.cli`."""
