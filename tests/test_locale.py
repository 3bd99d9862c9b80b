"""The program prints correctly where the en_US.UTF-8 locale is missing and LANG is unset."""
import os


def test_output_without_any_locale(codon, tmp_path):
    env = {k: v for k, v in os.environ.items() if not (k.startswith("LC_") or k in ("LANG", "LANGUAGE"))}
    env["LOCPATH"] = str(tmp_path)   # an empty locale directory: no locale can be loaded
    args = ["--iters", "1000", "--json"]
    bare = codon.run(*args, env=env)
    assert bare.returncode == 0, bare.stderr
    assert bare.stderr == ""
    normal = codon.ok(*args)
    strip = lambda out: [line.split('"seconds"')[0] + line.split('"sum_f"')[1] for line in out.splitlines()]
    assert strip(bare.stdout) == strip(normal)
    text = codon.run("--iters", "10", env=env)
    assert text.returncode == 0 and "sum_f" in text.stdout
    ev = codon.run("--eval", "0.5", "1e-3", env=env)
    assert ev.returncode == 0 and ev.stdout.startswith("x 0.5  y 0.001")
