"""The adversarial vault end to end: every good note searchable, every bad input ingested or
rejected with a reason, nothing unreadable taken for deleted, each run finished within a bound.

The graph runs in a child process without the power to bypass file permissions (see
:mod:`tests.messy_run`), through ``dg.materialize`` of raw_docs -> latest_docs -> chunks (the
embeddings step reads no file; ``bench/messy_vault.py`` runs it too).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.messy_run import judge, run_graph
from tests.messy_vault import Vault, build, lock, unlock
from tests.unprivileged import require_unreadable

# Generous: about 45 s on a busy 2-core machine. A hang (a YAML bomb, a FIFO read, a symlink
# loop) would run into it instead of blocking the suite.
RUN_BOUND_S = 480


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    built = build(tmp_path / "vault", tmp_path / "outside")
    yield built
    unlock(built.root)


def test_messy_vault_lands_every_good_note_and_names_every_bad_one(
    db_url: str, vault: Vault
) -> None:
    require_unreadable(vault.root / "private.md")
    assert len(vault.cases) >= 80
    first = run_graph(db_url, vault.root, embed=False, timeout_s=RUN_BOUND_S)
    assert not first.hung and first.success, first.failures
    verdict = judge(db_url, vault, vault.cases)
    rejected = [name for name, got in verdict.outcomes.items() if got.startswith("rejected")]
    # the symlinked folder (not followed) is recorded as a folder, not counted as a file
    assert first.metadata["raw_docs"]["rejected"] == len(rejected) - 1 > 40
    assert first.metadata["raw_docs"]["unreadable_folders"] == 0
    assert first.metadata["raw_docs"]["symlinked_folders"] == 1
    assert verdict.good_lost == []
    assert verdict.wrong == []
    assert first.metadata["chunks"]["failed_notes"] == 0

    # made unreadable after they were stored: kept and reported, never deleted
    locked = lock(vault.root)
    second = run_graph(db_url, vault.root, embed=False, timeout_s=RUN_BOUND_S)
    assert not second.hung and second.success, second.failures
    assert second.metadata["raw_docs"]["deleted"] == 0
    assert second.metadata["raw_docs"]["unreadable_folders"] == 1
    assert second.metadata["raw_docs"]["symlinked_folders"] == 1
    again = judge(db_url, vault, vault.cases + locked)
    assert again.good_lost == [] and again.wrong == []

    # readable again: the next run converges and reports nothing new as rejected
    unlock(vault.root)
    third = run_graph(db_url, vault.root, embed=False, timeout_s=RUN_BOUND_S)
    assert third.success and third.metadata["raw_docs"]["unreadable_folders"] == 0
    assert "locked-file.md" not in third.metadata["raw_docs"]["rejected_files"]
