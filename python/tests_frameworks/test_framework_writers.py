"""The log fixtures the readers are tested on (test/fixtures/logs/writers/, docs/log-formats.md) are
what the frameworks' own writer code writes: scripts/make-framework-fixtures.py is run again here
with the real packages, pinned in python/requirements-frameworks.txt, and its output compared with
the committed files.

- trackio 0.43.0 writes the project database (traces as slime's --use-trackio logs them); its
  conversion by consensus_lens.convert must equal the committed native/ (the database itself holds
  timestamps and ids, so its bytes differ from run to run).
- miles' save_dashboard_columns (radixark/miles 31f1ca96, run on the real polars 2.1.0) writes the
  dashboard columns; the trajectory files, written from the code read, must be byte-equal, the
  parquet files equal as tables (read with pyarrow).

skyrl-train 0.3.1 needs Python 3.12 and verifiers 0.1.14 pulls a different datasets than verl
pins, so their fixtures are not rewritten here (docs/log-formats.md says how they were made).
"""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FX = os.path.join(ROOT, "test", "fixtures", "logs", "writers")

pytest.importorskip("trackio")
pytest.importorskip("polars")
pq = pytest.importorskip("pyarrow.parquet")


def _files(d):
    return sorted(os.path.relpath(os.path.join(r, f), d) for r, _, fs in os.walk(d) for f in fs)


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    out = tmp_path_factory.mktemp("writers")
    env = dict(os.environ, CONSENSUS_LENS_FIXTURES_OUT=str(out))
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "make-framework-fixtures.py"), "trackio", "miles"],
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return out


def test_trackio_database_written_by_trackio_converts_to_the_committed_records(written):
    got, want = os.path.join(written, "trackio", "native"), os.path.join(FX, "trackio", "native")
    assert _files(got) == _files(want) == ["slime-rank-0/000000.jsonl", "slime-rank-0/000001.jsonl"]
    for f in _files(want):
        with open(os.path.join(got, f), encoding="utf-8") as a, open(os.path.join(want, f), encoding="utf-8") as b:
            assert a.read() == b.read(), f
    # the committed database is trackio's too: same traces table
    import sqlite3

    def rows(db):
        c = sqlite3.connect("file:%s?mode=ro&immutable=1" % db, uri=True)
        try:
            return [r for r in c.execute("SELECT run_name, step, key, trace_index, messages, metadata FROM traces ORDER BY rowid")]
        finally:
            c.close()

    assert rows(os.path.join(written, "trackio", "db", "cl-fixture.db")) == rows(os.path.join(FX, "trackio", "db", "cl-fixture.db"))


def test_miles_dashboard_columns_written_by_polars_equal_the_committed_ones(written):
    got, want = os.path.join(written, "miles"), os.path.join(FX, "miles")
    assert _files(got) == _files(want)
    for f in _files(want):
        a, b = os.path.join(got, f), os.path.join(want, f)
        if f.endswith(".parquet"):
            ta, tb = pq.read_table(a), pq.read_table(b)
            assert ta.schema == tb.schema and ta.to_pylist() == tb.to_pylist(), f
            # polars' defaults, as miles writes them: ZSTD pages, 8 rows a row group
            meta = pq.ParquetFile(a).metadata
            assert meta.row_group(0).column(0).compression == "ZSTD" and meta.row_group(0).num_rows == 8
        else:
            with open(a, "rb") as x, open(b, "rb") as y:
                assert x.read() == y.read(), f
