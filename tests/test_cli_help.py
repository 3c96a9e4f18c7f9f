"""Help texts a person reads: plain text, the defaults stated, the verb's own errors."""

from __future__ import annotations

import re

import pytest

from strider.cli import _all_parsers, build_parser, main

PARSERS = _all_parsers(build_parser())
#: reST markup that a terminal would show as is.
MARKUP = re.compile(r"``|:(func|class|mod|meth|attr|data):`|::$", re.M)


@pytest.mark.parametrize("verb", PARSERS, ids=lambda p: p.prog)
def test_help_is_plain_text(verb):
    text = verb.format_help()
    assert not MARKUP.search(text), MARKUP.search(text).group(0)


@pytest.mark.parametrize("verb", [p for p in PARSERS if any(a.dest == "hw" for a in p._actions)],
                         ids=lambda p: p.prog)
def test_every_hw_option_states_its_default(verb):
    hw = next(a for a in verb._actions if a.dest == "hw")
    if hw.default is not None:
        assert f"default {hw.default}" in " ".join(hw.help.split())


def test_only_one_verb_calls_itself_the_main_job():
    assert sum("main job" in p.format_help() for p in PARSERS) <= 1


@pytest.mark.parametrize("perm", [["0", "2", "1"], ["0,2,1"]])
def test_a_perm_may_be_spaced_or_comma_separated(perm, capsys):
    assert main(["permute", "--shape", "4", "6", "8", "--perm", *perm, "--hw", "tiny",
                 "--json"]) == 0
    assert '"verified": true' in capsys.readouterr().out


def test_a_bad_perm_is_the_verbs_own_error_with_a_perm_example(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["permute", "--shape", "4,6,8", "--perm", "0", "x", "1", "--hw", "tiny"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: strider permute") and "argument --perm" in err
    assert "0,2,3,1" in err and "4,8,16" not in err


@pytest.mark.parametrize("argv,hint", [
    (["--dtype", "bflaot16"], "did you mean 'bfloat16'"),
    (["--dtype", "flaot32"], "did you mean 'float32'"),
    (["--hw", "trn1like"], "did you mean 'trn1-like'"),
    (["--hw", "tinyy"], "did you mean 'tiny'"),
])
def test_a_misspelt_dtype_or_preset_gets_a_did_you_mean(argv, hint, capsys):
    assert main(["permute", "--shape", "4,6", "--perm", "1,0", "--hw", "tiny", *argv]) == 2
    assert hint in capsys.readouterr().err


@pytest.mark.parametrize("option", ["--plot", "--trace"])
def test_an_output_path_that_is_a_directory_is_named_as_one(option, tmp_path, capsys):
    assert main(["permute", "--shape", "4,6", "--perm", "1,0", "--hw", "tiny",
                 option, str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err


def test_stream_and_sweep_name_the_reduce_kernel_alike():
    from strider.sweep.workloads import STREAM_KERNELS

    stream = next(p for p in PARSERS if p.prog == "strider stream")
    kernels = next(a for a in stream._actions if a.dest == "kernel").choices
    assert set(STREAM_KERNELS) == set(kernels)


def test_a_command_line_imports_only_its_own_verb():
    """`strider cache show` starts without importing the other verbs (NumPy, the planners):
    a command pays only for what it runs."""
    import os
    import subprocess
    import sys

    code = ("import sys\nfrom strider.cli import main\nmain(['cache', 'show'])\n"
            "print(sorted(m for m in sys.modules if m.startswith('strider.cli.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ, "STRIDER_CACHE": "off"})
    loaded = out.stdout.strip().splitlines()[-1]
    assert "strider.cli.cache" in loaded and "strider.cli.demo" not in loaded, loaded


@pytest.mark.parametrize("argv", [["--help"], ["sweeep"]])
def test_without_a_known_verb_the_whole_parser_answers(argv, capsys):
    with pytest.raises(SystemExit):
        main(argv)
    text = capsys.readouterr()
    assert "transpose" in text.out + text.err   # every verb listed
