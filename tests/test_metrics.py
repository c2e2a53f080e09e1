from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from gitimprove.errors import MetricError
from gitimprove.loop.metrics import extract, run_metric


@pytest.mark.parametrize(
    ("output", "spec", "name", "value", "got_name"),
    [
        ("warming up\nMETRIC ms=12.5\nMETRIC mem=3\n", "auto", None, 12.5, "ms"),
        ("METRIC ms=12.5\nMETRIC mem=3\n", "auto", "mem", 3.0, "mem"),
        ('log line 7\n{"primary": 0.93, "other": 2}\n', "auto", None, 0.93, None),
        ('{"score": 4}\n', "auto", None, 4.0, "score"),
        ('{"combined_score": -1.5e-3}\n', "auto", None, -0.0015, "combined_score"),
        ('{"val_bpb": 0.9979, "score": 1}\n', "auto", "val_bpb", 0.9979, "val_bpb"),
        ("took 3 steps, loss 0.25\n", "auto", None, 0.25, None),
        (
            "val_bpb:          0.997900\ntraining_seconds: 300.1\n",
            "line:val_bpb",
            None,
            0.9979,
            "val_bpb",
        ),
        ('{"a": {"b": 7}}\n', "json:a.b", None, 7.0, "a.b"),
        ("result=41 result=42 done\n", r"regex:result=(\d+)", None, 42.0, None),
        ("1,234 items in 5.5s\n", "auto", None, 5.5, None),
        ("3 items, see information\n", "auto", None, 3.0, None),
    ],
)
def test_extract(
    output: str, spec: str, name: str | None, value: float, got_name: str | None
) -> None:
    got = extract(output, spec, name)
    assert got.value == pytest.approx(value)
    assert got.name == got_name


def test_secondary_metrics_are_kept() -> None:
    got = extract("METRIC ms=12.5\nMETRIC mem=3\n")
    assert dict(got.secondary) == {"mem": 3.0}


@pytest.mark.parametrize(
    ("output", "spec", "needle"),
    [
        ("", "auto", "printed nothing"),
        ("   \n", "auto", "printed nothing"),
        ("all good, no numbers here\n", "auto", "no number"),
        ("METRIC ms=nan\n", "auto", "not a finite number"),
        ("score inf\n", "auto", "not a finite number"),
        ('{"score": "NaN"}\n', "auto", "not a finite number"),
        ("METRIC ms=1e308\n", "auto", "outside the magnitudes"),
        ("score -1e101\n", "auto", "outside the magnitudes"),
        ("METRIC ms=1e-320\n", "auto", "outside the magnitudes"),
        ('{"score": 1e200}\n', "auto", "outside the magnitudes"),
        ("x\n", "regex:(\\d+)", "matched nothing"),
        ('{"a": 1}\n', "json:b", "has the key 'b'"),
        ('{"a": "x"}\n', "json:a", "not a number"),
        ("loss: 1\n", "line:val", "`val: <number>`"),
    ],
)
def test_extract_errors(output: str, spec: str, needle: str) -> None:
    with pytest.raises(MetricError) as info:
        extract(output, spec)
    assert needle in info.value.message
    assert info.value.output == output


def test_run_metric_statuses(tmp_path: Path) -> None:
    ok = run_metric(f"{sys.executable} -c 'print(\"METRIC x=2\")'", tmp_path, timeout=30)
    assert (ok.status, ok.value, ok.name) == ("ok", 2.0, "x")
    crash = run_metric(
        f"{sys.executable} -c 'import sys; print(\"boom\"); sys.exit(3)'", tmp_path, timeout=30
    )
    assert (crash.status, crash.exit_code) == ("crash", 3)
    assert "boom" in crash.tail
    text = run_metric("echo all fine", tmp_path, timeout=30)
    assert text.status == "metric-error"
    assert text.value is None


@pytest.mark.slow
def test_metric_timeout_kills_the_process_group(tmp_path: Path) -> None:
    marker = tmp_path / "survivor"
    script = tmp_path / "fork.py"
    script.write_text(
        "import os, time, pathlib\n"
        "if os.fork() == 0:\n"
        "    time.sleep(3)\n"
        f"    pathlib.Path({str(marker)!r}).write_text('alive')\n"
        "    os._exit(0)\n"
        "time.sleep(60)\n"
    )
    start = time.monotonic()
    got = run_metric(f"{sys.executable} {script}", tmp_path, timeout=1)
    assert got.status == "timeout"
    assert time.monotonic() - start < 10
    time.sleep(3.5)
    assert not marker.exists(), "a child of the metric outlived its timeout"
