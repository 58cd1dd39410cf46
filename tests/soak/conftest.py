"""`make soak`: the figures of every soak run are printed at the end of the pytest run."""

import pytest

REPORTS: list = []  # (title, text) appended by the soak tests


@pytest.fixture
def soak_report():
    def add(title: str, text: str) -> None:
        REPORTS.append((title, text))

    return add


def pytest_terminal_summary(terminalreporter):
    for title, text in REPORTS:
        terminalreporter.section(title, sep="=")
        terminalreporter.write_line(text)
