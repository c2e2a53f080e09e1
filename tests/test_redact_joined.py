"""Records joined on one line with `; ` (a shell's `a; b`, a log that folds several
messages into one): a table after or before another record is still read as a table, and
its secret cells are masked; a table of descriptions stays as it is."""

from __future__ import annotations

import re

import pytest

from gitimprove.redaction import redact
from tests.secret_corpus import Fake, corpus

MARKERS = re.compile(r"\[REDACTED:[a-z0-9-]+:[0-9a-f]{4}\]")
FAKES = corpus(seed=23)
# the families laid out as rows and columns (CSV, TSV, Markdown, psql, tool tables)
TABLES = [f for f in FAKES if re.search(r"csv|tsv|table|psql|column", f.family)]
OTHERS = [f for f in FAKES if f not in TABLES and "\n" not in f.text.strip()][::9]


def _left(text: str, fake: Fake) -> bool:
    return fake.secret in MARKERS.sub("", redact(text))


def test_the_table_families_are_many() -> None:
    assert len(TABLES) >= 10 and len(OTHERS) >= 20


@pytest.mark.slow
@pytest.mark.parametrize("fake", TABLES, ids=[f.family for f in TABLES])
def test_a_table_joined_with_other_records_is_masked(fake: Fake) -> None:
    table = fake.text.rstrip("\n")
    for other in OTHERS:
        for text in (
            f"{other.text}; {table}",
            f"{table}; {other.text}",
            f"{other.text}; {table}; {other.text}",
        ):
            assert not _left(text, fake), (text, redact(text))
            assert not _left(text, other), (text, redact(text))


@pytest.mark.parametrize(
    "text",
    [
        "export X=1; host;port;user;password\ndb1;5432;app;${DB_PASSWORD}",
        "cd /srv; | Setting | Description |\n|---|---|\n| DB_PASSWORD | The database password |",
        "ok; name,api_key\nci,see the vault; echo done",
        "set -e; login,pwd,role\nops,(set),admin; exit 0",
    ],
)
def test_a_joined_table_without_secrets_passes(text: str) -> None:
    assert redact(text) == text
