"""The Python package's ``consensus-lens`` command (consensus_lens/cli.py): ``path NAME`` names a
module's file or says there is none; every other command is the engine's, run unchanged."""
import os
import subprocess
import sys
import unittest

from tests.helpers import CLI, PYROOT

ENV = {**os.environ, "PYTHONPATH": PYROOT}


def run(*args):
    return subprocess.run([sys.executable, "-m", "consensus_lens", *args], capture_output=True, text=True,
                          env=ENV, timeout=120)


class PathCommand(unittest.TestCase):
    def test_a_module_that_exists_is_printed_as_its_file(self):
        for name in ("verl", "trl", "reward", "openrlhf"):
            r = run("path", name)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout, os.path.join(PYROOT, "consensus_lens", name + ".py") + "\n")

    def test_a_module_that_does_not_exist_is_an_error_naming_the_ones_that_do(self):
        for name in ("deepspeed", "../setup", "cli", "__init__"):
            r = run("path", name)
            self.assertEqual(r.returncode, 2, name)
            self.assertEqual(r.stdout, "")
            self.assertIn("no module %r" % name, r.stderr)
            self.assertIn("verl", r.stderr)

    def test_path_without_a_name_is_a_usage_error(self):
        r = run("path")
        self.assertEqual(r.returncode, 2)
        self.assertIn("usage: consensus-lens path NAME", r.stderr)


@unittest.skipUnless(os.path.isfile(CLI), "dist/cli.js is not built (npm run build)")
class EngineCommands(unittest.TestCase):
    def test_other_commands_are_the_engines(self):
        r = run("--version")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"^consensus-lens \d+\.\d+\.\d+")
        r = subprocess.run([sys.executable, "-m", "consensus_lens", "extract", "-"], input="so \\boxed{42}",
                           capture_output=True, text=True, env=ENV, timeout=120)
        self.assertEqual((r.returncode, r.stdout.strip()), (0, '"42"'), r.stderr)
        r = run("score", "--kappa")  # the engine's usage error and exit code, passed through
        self.assertEqual(r.returncode, 2)

    def test_help_lists_the_engines_commands_and_path(self):
        r = run("--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("score", r.stdout)
        self.assertIn("consensus-lens path verl", r.stdout)


if __name__ == "__main__":
    unittest.main()
