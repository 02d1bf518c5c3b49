"""consensus_lens.convert on slime/miles --dump-details files, with the real torch: the committed
dumps (made as slime's save_debug_rollout_data writes them, scripts/make-framework-fixtures.py)
convert to the committed native log, and a pickle that would run code when loaded is refused by
torch.load(weights_only=True) without running it."""
import os

import pytest

torch = pytest.importorskip("torch")

from consensus_lens.convert import main  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FX = os.path.join(ROOT, "test", "fixtures", "logs", "writers", "slime")


def test_the_committed_dumps_convert_to_the_committed_native_log(tmp_path):
    dumps = [os.path.join(FX, "dump", "rollout_data", "%d.pt" % i) for i in (0, 1)]
    assert main(["slime", *dumps, "--out", str(tmp_path)]) == 0
    for i in (0, 1):
        with open(tmp_path / ("%06d.jsonl" % i)) as got, open(os.path.join(FX, "native", "%06d.jsonl" % i)) as want:
            assert got.read() == want.read()


class _RunsCode:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):  # what a malicious .pt does: loading it calls a function of its choice
        return (open, (self.marker, "w"))


def test_a_pickle_that_runs_code_is_refused_and_never_run(tmp_path, capsys):
    marker = tmp_path / "ran"
    dump = tmp_path / "rollout_data" / "5.pt"
    dump.parent.mkdir()
    torch.save({"rollout_id": 5, "samples": [_RunsCode(str(marker))]}, dump)
    assert not marker.exists()
    assert main(["slime", str(dump), "--out", str(tmp_path / "out")]) == 1
    assert not marker.exists()  # the code in the pickle did not run
    assert "refused by torch.load(weights_only=True)" in capsys.readouterr().err
    assert not (tmp_path / "out" / "000005.jsonl").exists()
