import contextlib
import io
import os
import shutil
import tempfile
import unittest

from consensus_lens.convert import main
from tests.helpers import REPO

FX = os.path.join(REPO, "test", "fixtures", "logs", "writers", "trackio")


def _read(path):
    with open(path, "rb") as f:
        return f.read()


class TrackioConvertTests(unittest.TestCase):
    def test_the_database_trackio_wrote_converts_to_the_committed_native_log_read_only(self):
        with tempfile.TemporaryDirectory() as d:
            db = os.path.join(d, "cl-fixture.db")
            shutil.copy(os.path.join(FX, "db", "cl-fixture.db"), db)
            before = _read(db)
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
                self.assertEqual(main(["trackio", db, "--out", os.path.join(d, "out")]), 0)
            self.assertIn("a group holds the traces logged for it", err.getvalue())
            self.assertEqual(_read(db), before)  # read-only
            for step in ("000000", "000001"):
                with open(os.path.join(d, "out", "slime-rank-0", step + ".jsonl")) as got, \
                        open(os.path.join(FX, "native", "slime-rank-0", step + ".jsonl")) as want:
                    self.assertEqual(got.read(), want.read())
            import json

            with open(os.path.join(d, "out", "slime-rank-0", "000000.jsonl")) as f:
                recs = [json.loads(line) for line in f]
            # slime logged the first 10 of 12 samples: the last group holds the 2 traces logged for it
            self.assertEqual([len(r["rollouts"]) for r in recs], [4, 4, 2])
            self.assertTrue(all(r["extra"]["sampled"] for r in recs))

    def test_a_database_without_traces_is_refused(self):
        import sqlite3

        with tempfile.TemporaryDirectory() as d:
            db = os.path.join(d, "x.db")
            sqlite3.connect(db).execute("CREATE TABLE metrics (id INTEGER)").connection.close()
            with contextlib.redirect_stderr(io.StringIO()) as err:
                self.assertEqual(main(["trackio", db, "--out", os.path.join(d, "out")]), 1)
            self.assertIn("not a Trackio project database", err.getvalue())

    def test_a_traces_view_is_refused_unread(self):
        # a database from anyone: "traces" that computes rows (an endless recursive view) is not run
        import sqlite3

        with tempfile.TemporaryDirectory() as d:
            db = os.path.join(d, "x.db")
            c = sqlite3.connect(db)
            c.execute("CREATE VIEW traces AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
                      "SELECT 'run' AS run_name, n AS step, 'k' AS key, 0 AS trace_index, '[]' AS messages, '{}' AS metadata FROM r")
            c.commit()
            c.close()
            with contextlib.redirect_stderr(io.StringIO()) as err:
                self.assertEqual(main(["trackio", db, "--out", os.path.join(d, "out")]), 1)
            self.assertIn("no traces table", err.getvalue())
            self.assertFalse(os.path.exists(os.path.join(d, "out")))


if __name__ == "__main__":
    unittest.main()
