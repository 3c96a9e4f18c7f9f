"""``strider stream``: default run is 8x the SBUF, verified; errors are clean."""

from __future__ import annotations

import json

import pytest

from strider import Hardware
from strider.cli import main
from strider.stream.program import default_shape


def test_default_tensor_is_eight_sbufs(capsys, tmp_path):
    hw = Hardware.preset("tiny")
    assert default_shape(hw, 4, 4)[0] * default_shape(hw, 4, 4)[1] * 4 >= 8 * 2048
    for kernel in ("scale-bias", "reduce", "permute"):
        rc = main(["stream", "--hw", "tiny", "--kernel", kernel, "--json",
                   "--trace", str(tmp_path / "t.json")])
        report = json.loads(capsys.readouterr().out)
        assert rc == 0 and report["verified"] is True
        assert report["tensor_bytes"] >= 8 * hw.sbuf.capacity_bytes
        assert (tmp_path / "t.json").exists()


def test_text_report_and_plot(capsys, tmp_path):
    rc = main(["stream", "--hw", "tiny", "--kernel", "reduce", "--op", "sum", "--dtype", "int16",
               "--shape", "100,6", "--pages", "3", "--plot", str(tmp_path / "p.png")])
    out = capsys.readouterr().out
    assert rc == 0 and "bit-exact" in out and "plot written" in out


def test_errors_are_clean(capsys):
    assert main(["stream", "--hw", "tiny", "--pages", "100"]) == 2
    assert "exceed the SBUF" in capsys.readouterr().err
    assert main(["stream", "--hw", "tiny", "--kernel", "reduce", "--op", "sum"]) == 2
    assert "summation order" in capsys.readouterr().err


def test_a_stream_that_fails_verification_exits_1(capsys, monkeypatch):
    # every verb maps a wrong result to 1 (a typo or a refusal is 2)
    from strider.stream.runner import StreamResult

    def disagree(self, x):
        return False  # as if the streamed output differed from NumPy's

    monkeypatch.setattr(StreamResult, "verify", disagree)
    rc = main(["stream", "--hw", "tiny", "--shape", "64,8", "--dtype", "int32", "--json"])
    captured = capsys.readouterr()
    assert rc == 1 and json.loads(captured.out)["verified"] is False
    assert "differs from NumPy" in captured.err


def test_stream_inputs_are_checked(capsys):
    from strider.errors import ArgumentError
    from strider.stream import scale_bias, stream

    assert stream((64, 8), "int32", scale_bias(2, 1), "tiny").hw.name == "tiny"  # a name
    with pytest.raises(ArgumentError, match="processing engines"):
        stream((64, 8), "int32", scale_bias(2, 1), "tiny", engines=99)
    assert main(["stream", "--hw", "tiny", "--engines", "99"]) == 2
    assert "stream.processing_engines" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:  # an argparse usage error
        main(["stream", "--hw", "tiny", "--seed", "-1"])
    assert exit_.value.code == 2
    rc = main(["stream", "--hw", "tiny", "--shape", "64,8", "--dtype", "int8"])
    out = capsys.readouterr()
    assert rc == 0 and "0.0 MiB" not in out.out + out.err and "512 B" in out.err


@pytest.mark.parametrize("argv, words", [
    (["--segment-rows", "0"], "--segment-rows must be an int >= 1, got 0"),
    (["--page-shape", "0,4"], "--page-shape entries must be an int >= 1"),
    (["--page-shape", "4"], "--page-shape has 1 dims"),
    (["--streaming-dim", "5"], "--streaming-dim 5 is out of range"),
    (["--pages", "0"], "--pages must be an int >= 1"),
    (["--step", "0"], "--step must be an int >= 1"),
    (["--engines", "0"], "--engines must be an int >= 1"),
    (["--engines", "99"], "--engines 99: tiny has 2 processing engines"),
    (["--kernel", "reduce", "--reduce-dim", "7"], "--reduce-dim 7 is out of range"),
    (["--kernel", "permute", "--perm", "0,0"], "--perm (0, 0) is not a permutation"),
    (["--shape", "4,-1"], "--shape (4, -1) has a negative extent"),
    (["--shape", "0,99999999999999999999"], "each dim may be at most"),
    (["--dtype", "U4"], "--dtype: dtype 'U4' is not a numeric or bool dtype"),
    (["--dtype", "str"], "--dtype: dtype 'str' is not a numeric or bool dtype"),
    (["--dtype", "object"], "--dtype: dtype 'object' is not a numeric or bool dtype"),
])
def test_errors_name_the_flags(capsys, argv, words):
    assert main(["stream", "--hw", "tiny", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err, err
    for name in ("segment_rows", "page_shape", "streaming_dim", "dtype("):
        assert name not in err


@pytest.mark.parametrize("flag", ["--scale", "--bias"])
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "2.5", "1e300"])
def test_a_scale_or_bias_no_integer_can_hold_is_refused(capsys, flag, value):
    assert main(["stream", "--hw", "tiny", "--dtype", "int32", f"{flag}={value}"]) == 2
    err = capsys.readouterr().err
    assert f"{flag} {value}" in err.replace("1e+300", "1e300")
    assert "is not representable in int32" in err and "Traceback" not in err


def test_a_scale_that_is_an_integer_still_runs(capsys):
    assert main(["stream", "--hw", "tiny", "--shape", "64,8", "--dtype", "int32",
                 "--scale", "3", "--bias", "-2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["verified"] is True


def test_pages_pick_a_layout_that_fits_them(capsys):
    # dim 0's page rows are 4 pages wide; streaming along dim 1 needs one page a row
    # (refused before: "4 page column(s) = 4 pages ... but the pool holds 2 page(s)")
    assert main(["stream", "--hw", "tiny", "--shape", "4,70,3", "--pages", "2", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["verified"] is True  # random data, bit-exact against NumPy
    assert (report["streaming_dim"], report["page_shape"], report["pages"]) == (1, [4, 5, 3], 2)
    # no layout fits: the refusal names the smallest pool, in flags
    assert main(["stream", "--hw", "tiny", "--shape", "9,9,9", "--dtype", "float64",
                 "--pages", "4", "--segment-rows", "2"]) == 2
    err = capsys.readouterr().err
    assert ("no streaming dim and page shape need fewer pages with --segment-rows 2 "
            "(--segment-rows 1 needs 3); give --pages >= 6") in err
